"""Training resolution (calc/resolution.py, docs/model.md 4.8): each formula called directly,
against FLOP counts worked by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from calc import resolution as rs

NAN = math.nan


def test_cnn_flops_follow_the_pixels() -> None:
    # ResNet-50: 4.11 GMACs = 8.22 GFLOPs at 224 px; at 160 px (160 / 224)^2 = 25,600 / 50,176 of it:
    # 8.22e9 x 0.510204 = 4.193878e9 FLOPs
    assert rs.forward_flops(8.22e9, 160, 224, NAN, NAN, NAN) == pytest.approx(8.22e9 * 25_600 / 50_176, rel=1e-12)
    assert rs.forward_flops(8.22e9, 160, 224, NAN, NAN, NAN) == pytest.approx(4.193878e9, rel=1e-6)
    # at 288 px (FixRes test size): (288 / 224)^2 = 1.653061 x
    assert rs.forward_flops(8.22e9, 288, 224, NAN, NAN, NAN) == pytest.approx(8.22e9 * 82_944 / 50_176, rel=1e-12)
    # at its own side: the count unchanged, exactly
    assert rs.forward_flops(8.22e9, 224, 224, NAN, NAN, NAN) == 8.22e9
    # activations and traffic follow the same ratio
    assert rs.per_example_scale(160, 224, NAN) == pytest.approx(25_600 / 50_176, rel=1e-12)


def test_vit_tokens_and_tower_flops() -> None:
    # ViT-B/16 at 224 px: (224 / 16)^2 = 196 patches + the class token = 197; at 160 px 100 + 1 = 101
    assert rs.vit_tokens(224, 16) == 197 and rs.vit_tokens(160, 16) == 101 and rs.vit_tokens(384, 16) == 577
    # a side that is not a whole number of patches keeps the whole ones: 230 / 16 = 14.4 -> 196 + 1
    assert rs.vit_tokens(230, 16) == 197
    # the tower at 197 tokens, 12 layers of 768: 12 x (24 x 197 x 768^2 + 4 x 197^2 x 768)
    # = 12 x (2,788,687,872 + 119,221,248) = 34,894,909,440; the patch embedding 2 x 196 x 3 x 256 x 768
    # = 231,211,008; in all 35,126,120,448 FLOPs (17.56 GMACs: timm's 17.58 GMACs with the head)
    assert rs.vit_forward_flops(197, 12, 768, 16) == 35_126_120_448
    # at 101 tokens: 12 x (24 x 101 x 589,824 + 4 x 10,201 x 768) + 2 x 100 x 768 x 768
    # = 12 x (1,429,733,376 + 31,337,472) + 117,964,800 = 17,650,814,976
    assert rs.vit_forward_flops(101, 12, 768, 16) == 17_650_814_976


def test_vit_flops_at_160_px_move_by_the_towers_difference() -> None:
    # ViT-B/16's measured 17.58 GMACs = 35.16 GFLOPs at 224 px, at 160 px:
    # 35.16e9 - 35,126,120,448 + 17,650,814,976 = 17,684,694,528 FLOPs (0.503 x: attention's tokens^2 term
    # falls faster than the pixels, the linear maps' with the tokens, 101 / 197 = 0.513)
    assert rs.forward_flops(35.16e9, 160, 224, 16, 12, 768) == pytest.approx(17_684_694_528, rel=1e-12)
    assert rs.per_example_scale(160, 224, 16) == pytest.approx(101 / 197, rel=1e-12)
    # at 384 px the attention term grows with 577^2: 12 x (24 x 577 x 589,824 + 4 x 577^2 x 768) + 2 x 576 x 589,824
    # = 12 x (8,167,882,752 + 1,022,757,888) + 679,477,248 = 110,967,164,928; + 35.16e9 - 35,126,120,448
    assert rs.forward_flops(35.16e9, 384, 224, 16, 12, 768) == pytest.approx(
        35.16e9 - 35_126_120_448 + 110_967_164_928, rel=1e-12
    )


def test_no_image_resolution_keeps_the_figures() -> None:
    # a language model (no reference side): FLOPs and activations as they are
    assert rs.forward_flops(1e12, NAN, NAN, NAN, NAN, NAN) == 1e12
    assert rs.forward_flops(1e12, 160, NAN, NAN, NAN, NAN) == 1e12
    assert rs.per_example_scale(160, NAN, NAN) == 1.0


def test_a_sweep_of_sides_is_one_vectorised_call() -> None:
    got = rs.forward_flops(8.22e9, np.array([112.0, 224.0, 448.0]), 224.0, NAN, NAN, NAN)
    assert list(got) == pytest.approx([8.22e9 / 4, 8.22e9, 8.22e9 * 4], rel=1e-12)
    vit = rs.per_example_scale(np.array([160.0, 224.0]), 224.0, np.array([16.0, NAN]))
    assert list(vit) == pytest.approx([101 / 197, 1.0], rel=1e-12)


def test_a_vit_of_one_pixel_patches() -> None:
    # patch 1 (a token per pixel): 8 x 8 = 64 + 1 = 65 tokens, 4 x 4 = 16 + 1 = 17; one layer of width 2:
    # F_vit(s) = 24 x s x 4 + 4 x s^2 x 2 + 2 x (s - 1) x 3 x 1 x 2 = 96 s + 8 s^2 + 12 (s - 1)
    # s = 65: 6,240 + 33,800 + 768 = 40,808; s = 17: 1,632 + 2,312 + 192 = 4,136
    assert rs.vit_forward_flops(65, 1, 2, 1) == 40_808 and rs.vit_forward_flops(17, 1, 2, 1) == 4_136
    assert rs.forward_flops(10_000, 8, 4, 1, 1, 2) == 10_000 + 40_808 - 4_136
    assert rs.per_example_scale(8, 4, 1) == pytest.approx(65 / 17, rel=1e-12)
