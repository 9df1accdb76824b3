"""Training resolution: how an image model's per-example work follows the pixels it trains on
(docs/model.md section 4.8).

A model preset's FLOPs, activations and memory traffic are measured at one resolution
``reference_px`` (224 px for the ImageNet models). Trained at ``train_px`` instead:

    CNN:  every convolution's output map has (train_px / reference_px)^2 the positions, so its
          FLOPs, saved activations and bytes moved scale by that ratio
              F(train_px) = F(reference_px) x (train_px / reference_px)^2
    ViT:  the image is cut into patches: tokens s = (px / patch)^2 + 1 (the class token). A
          layer's linear maps cost 2 x 12 x h^2 per token (QKV and output projection 4 h^2,
          an MLP of 4 h: 8 h^2; x 2 FLOPs per multiply-accumulate), attention's QK^T and AV
          2 x 2 x s x h per token, the patch embedding 2 x 3 patch^2 x h per patch:
              F_vit(s) = layers x (24 s h^2 + 4 s^2 h) + 2 (s - 1) 3 patch^2 h
          and the preset's measured count moves by the difference (a text tower, a head, stay):
              F(train_px) = F(reference_px) + F_vit(s(train_px)) - F_vit(s(reference_px))
          activations and traffic follow the tokens (flash attention keeps no s x s matrix):
              x s(train_px) / s(reference_px)

References
----------
Dosovitskiy et al. 2021, "An Image is Worth 16x16 Words" (ViT: patches, class token, MLP 4h).
Kaplan et al. 2020, "Scaling Laws for Neural Language Models", Table 1 (2 x parameters FLOPs
per token for the linear maps, attention's 2 x n_ctx x d per token per layer for QK^T and AV).
He et al. 2016 (ResNet): convolutions over feature maps whose size follows the input's.
"""

from __future__ import annotations

from calc._types import Numeric, floats, floor, isfinite, scalar, where
from calc.formula import formula

VIT_LINEAR_FLOPS_PER_TOKEN_PER_H2 = 24.0
"""Forward FLOPs per token per hidden^2 in one ViT layer: QKV + output projection (4 h^2) and an
MLP of 4 h (8 h^2) multiply-accumulates, x 2 FLOPs each."""

VIT_ATTENTION_FLOPS_PER_TOKEN2_PER_H = 4.0
"""Forward FLOPs per token^2 per hidden in one layer: QK^T and AV, each 2 x s x h per token."""


def vit_tokens(px: Numeric, patch: Numeric) -> Numeric:
    """Tokens of a ViT image: (px / patch)^2 whole patches, plus the class token [1]."""
    side = floor(floats(px) / patch)
    tokens: Numeric = side * side + 1.0
    return tokens


def vit_forward_flops(tokens: Numeric, layers: Numeric, hidden: Numeric, patch: Numeric) -> Numeric:
    """Forward FLOPs of a ViT image tower at ``tokens`` [FLOPs]: layers x (24 s h^2 + 4 s^2 h)
    plus the patch embedding 2 x (s - 1) x 3 patch^2 x h."""
    s, h = floats(tokens), floats(hidden)
    per_layer = VIT_LINEAR_FLOPS_PER_TOKEN_PER_H2 * s * h * h + VIT_ATTENTION_FLOPS_PER_TOKEN2_PER_H * s * s * h
    embed = 2.0 * (s - 1.0) * 3.0 * floats(patch) * patch * h
    flops: Numeric = floats(layers) * per_layer + embed
    return flops


@formula(
    "forward_flops_per_example",
    "CNN: {reference_forward_flops} x ({train_resolution} / {reference_resolution})^2; ViT: {reference_forward_flops} "
    "+ F_vit(tokens at {train_resolution}) - F_vit(tokens at {reference_resolution}) ({src_forward_flops_per_example})",
)
def forward_flops(
    flops_at_reference: Numeric,
    train_px: Numeric,
    reference_px: Numeric,
    patch: Numeric,
    layers: Numeric,
    hidden: Numeric,
) -> Numeric:
    """Forward FLOPs per example at ``train_px`` from the count at ``reference_px`` [FLOPs].

    ``patch`` > 0 marks a ViT (its tower's FLOPs move by the difference of ``vit_forward_flops``);
    NaN a CNN (the count scales with the pixels). A NaN ``reference_px`` (no image resolution: a
    language model, a blank model's own figures) keeps the count as it is.
    """
    ref, px, pt = floats(reference_px), floats(train_px), floats(patch)
    if scalar(pt) and scalar(ref) and scalar(px) and not pt > 0:
        # one scenario of a CNN or of no image: the pixels' ratio only (the ViT terms cost ~10 us)
        return where(isfinite(ref) & isfinite(px), floats(flops_at_reference) * (px / ref) ** 2, flops_at_reference)
    cnn = floats(flops_at_reference) * (px / ref) ** 2
    tower = vit_forward_flops(vit_tokens(px, patch), layers, hidden, patch) - vit_forward_flops(
        vit_tokens(ref, patch), layers, hidden, patch
    )
    vit = floats(flops_at_reference) + tower
    scaled = where(floats(patch) > 0, vit, cnn)
    return where(isfinite(ref) & isfinite(px), scaled, flops_at_reference)


def per_example_scale(train_px: Numeric, reference_px: Numeric, patch: Numeric) -> Numeric:
    """Factor on activations and memory traffic per example at ``train_px`` [1]: the pixels'
    ratio for a CNN (``patch`` NaN), the tokens' for a ViT (``patch`` > 0); 1 with no image
    resolution."""
    ref, px, pt = floats(reference_px), floats(train_px), floats(patch)
    cnn = (px / ref) ** 2
    if scalar(pt) and scalar(ref) and scalar(px) and not pt > 0:
        return where(isfinite(ref) & isfinite(px), cnn, 1.0)  # one CNN or no image: as below, quicker
    vit = vit_tokens(px, patch) / vit_tokens(ref, patch)
    scale = where(floats(patch) > 0, vit, cnn)
    return where(isfinite(ref) & isfinite(px), scale, 1.0)
