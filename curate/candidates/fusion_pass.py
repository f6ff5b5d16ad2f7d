"""Hand-written FX fusion pass for common long-tail patterns (pattern/replacement form).

Each ``(pattern, replacement)`` pair in :data:`PATTERNS` is applied with
``torch.fx.subgraph_rewriter.replace_pattern``; the rewritten graph runs eagerly. The patterns
are the decomposed forms Dynamo records for layers that Inductor handles poorly on small CPU
shapes (many small pointwise/reduction kernels plus wrapper overhead), replaced by one fused
ATen kernel each:

- RMSNorm (Llama, Qwen, Mistral, Gemma...): ``x * rsqrt(mean(x^2) + eps) * w`` -> ``F.rms_norm``
  (eps 1e-5 and 1e-6, the values of those configs), and the core without the weight
  (``x * rsqrt(mean(x^2) + eps)``, for graphs where a cast sits between it and the weight);
- tanh-GELU: GPT-2's ``NewGELUActivation`` (``0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3)))``)
  and Bloom's form (``x*0.5*(1+tanh(0.79788456*x*(1+0.044715*x*x)))``, a rounded constant:
  differs from the exact one by ~1e-8 relative) -> ``F.gelu(approximate="tanh")``;
- SiLU written out: ``x * sigmoid(x)`` -> ``F.silu``;
- softmax written out: ``exp(x - amax) / sum`` -> ``torch.softmax``.

RMSNorm's replacement reads the normalised size from the input (``x.shape[-1:]``); the
patterns match only the last dimension, as written.
"""

import torch
import torch.nn.functional as F


def _rms_pattern(eps):
    def pattern(x, w):
        v = x.pow(2).mean(-1, keepdim=True)
        return w * (x * torch.rsqrt(v + eps))

    def replacement(x, w):
        return F.rms_norm(x, x.shape[-1:], w, eps)

    return pattern, replacement


def _rms_core_pattern(eps):
    def pattern(x):
        v = x.pow(2).mean(-1, keepdim=True)
        return x * torch.rsqrt(v + eps)

    def replacement(x):
        return F.rms_norm(x, x.shape[-1:], None, eps)

    return pattern, replacement


def gelu_pattern(x):
    return 0.5 * x * (1.0 + torch.tanh(0.7978845608028654 * (x + 0.044715 * torch.pow(x, 3.0))))


def gelu_replacement(x):
    return F.gelu(x, approximate="tanh")


def gelu_bloom_pattern(x):
    return x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))


def silu_pattern(x):
    return x * torch.sigmoid(x)


def silu_replacement(x):
    return F.silu(x)


def softmax_pattern(x):
    e = torch.exp(x - x.amax(-1, keepdim=True))
    return e / e.sum(-1, keepdim=True)


def softmax_replacement(x):
    return torch.softmax(x, -1)


PATTERNS = [_rms_pattern(1e-5), _rms_pattern(1e-6), _rms_core_pattern(1e-5), _rms_core_pattern(1e-6), (gelu_pattern, gelu_replacement),
            (gelu_bloom_pattern, gelu_replacement), (silu_pattern, silu_replacement), (softmax_pattern, softmax_replacement)]
