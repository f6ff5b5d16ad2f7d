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

- conv2d + inference batch_norm (the most common pattern of the corpus and of the default long tail:
  ``conv2d>batch_norm>relu|add|iadd``) -> one ``conv2d`` with the BatchNorm folded into its weight
  and bias (``scale = gamma / sqrt(var + eps)``, ``w * scale``, ``beta - mean * scale``), computed
  per call because Dynamo lifts the weights and statistics as graph inputs, and only when the weight
  is smaller than the output activations (:func:`conv_bn_inference`). FX pattern literals
  must match exactly, so one pattern per literal combination that occurs in the corpus: bias-free
  conv, stride 1 or 2, padding 0..3, dilation 1, groups 1; BatchNorm momentum 0.1 / 0.01, eps
  1e-5 / 1e-3 (these cover about 80% of the conv2d>batch_norm instances of the default catalog).

RMSNorm's replacement reads the normalised size from the input (``x.shape[-1:]``); the
patterns match only the last dimension, as written.
"""

import torch
import torch.fx as fx
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


def conv_bn_inference(x, w, mean, var, gamma, beta, stride, padding, momentum, eps):
    """conv2d (no bias, dilation 1, groups 1) + inference batch_norm, folded when that is cheaper.

    Folding costs a pass over the weight (``w.numel()`` elements) per call and saves a pass over
    the activations (about ``N * C_out * H_out * W_out``); when the weight is the larger, the
    original two ops run unchanged (late ResNet layers: 512x512x3x3 weights, 7x7 maps).
    """
    n_out = x.shape[0] * w.shape[0] * (x.shape[2] // stride[0]) * (x.shape[3] // stride[1])
    if w.numel() < n_out:
        scale = gamma * torch.rsqrt(var + eps)
        return torch.conv2d(x, w * scale.reshape(-1, 1, 1, 1), beta - mean * scale, stride, padding, (1, 1), 1)
    return F.batch_norm(torch.conv2d(x, w, None, stride, padding, (1, 1), 1), mean, var, gamma, beta, False, momentum, eps)


fx.wrap("conv_bn_inference")  # a leaf in the traced replacement: it decides per call, on real shapes


def _conv_bn_pattern(stride, padding, momentum, eps):
    # Built node by node: Dynamo records batch_norm with positional arguments, while tracing a
    # Python pattern would record keywords, and the matcher compares args and kwargs as written.
    g = fx.Graph()
    x, w, mean, var, gamma, beta = (g.placeholder(n) for n in ("x", "w", "mean", "var", "gamma", "beta"))
    y = g.call_function(torch.conv2d, (x, w, None, stride, padding, (1, 1), 1))
    g.output(g.call_function(F.batch_norm, (y, mean, var, gamma, beta, False, momentum, eps)))
    pattern = fx.GraphModule(torch.nn.Module(), g)

    def replacement(x, w, mean, var, gamma, beta):
        return conv_bn_inference(x, w, mean, var, gamma, beta, stride, padding, momentum, eps)

    return pattern, replacement


CONV_BN_PATTERNS = [_conv_bn_pattern((s, s), (p, p), m, e) for s in (1, 2) for p in (0, 1, 2, 3)
                    for m in (0.1, 0.01) for e in (1e-5, 1e-3)]

_PAIRS = CONV_BN_PATTERNS + [_rms_pattern(1e-5), _rms_pattern(1e-6), _rms_core_pattern(1e-5), _rms_core_pattern(1e-6), (gelu_pattern, gelu_replacement),  # noqa: E501
            (gelu_bloom_pattern, gelu_replacement), (silu_pattern, silu_replacement), (softmax_pattern, softmax_replacement)]

# traced once here (the rewriter would re-trace callables on every call)
PATTERNS = [(p if isinstance(p, fx.GraphModule) else fx.symbolic_trace(p), fx.symbolic_trace(r)) for p, r in _PAIRS]
