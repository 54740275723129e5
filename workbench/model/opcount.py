"""FLOPs and bytes of one PyTorch operator from the shapes and element types a profiler
recorded (``record_shapes=True``: Kineto's ``Input Dims``, ``Input type`` and, from PyTorch
2.1 on, ``Concrete Inputs``).

FLOPs follow ``torch.utils.flop_counter`` for the matrix operators (a multiply-add is 2):

==========================================  ================================================
operator                                    FLOPs
==========================================  ================================================
``aten::mm`` A[m,k]·B[k,n]                  2·m·n·k
``aten::addmm`` (bias, A, B)                2·m·n·k (the bias add is not counted)
``aten::bmm`` A[b,m,k]·B[b,k,n]             2·b·m·n·k
``aten::baddbmm`` (input, A, B)             2·b·m·n·k
``aten::convolution`` / ``_convolution``    2·N·(C_out·C_in/groups·k…)·(output positions);
                                            a transposed one counts input positions
``aten::_scaled_dot_product_*_attention``   2·b·h·s_q·s_k·d_q + 2·b·h·s_q·s_k·d_v
(flash, efficient, cudnn) and               (QKᵀ and P·V), × c = 1 − min(s_q, s_k)/(2·s_k)
                                            where ``is_causal`` was recorded true
``aten::scaled_dot_product_attention``
``…_attention_backward``                    five such products: 2·b·h·s_q·s_k·(2·d_q + 3·d_v)
==========================================  ================================================

and the product's own operation kinds for the rest: an elementwise operator is a fused
one-step ``elementwise`` chain (FLOPs per element from its step, e.g. add 1, gelu 9, copy 0),
a layer or RMS norm a ``norm`` (a batch norm in training too, 8 an element; 4 in eval; its
backward 10 an element in training), a convolution's backward as many FLOPs as its forward
for each of dx and dW, max pooling (a compare per element of each window) and adaptive
average pooling (each window summed and divided), a softmax or log-softmax a ``softmax``
(their backward: 4 FLOPs an element; dy and y read, dx written), a sum, mean or max over
some dimensions a ``reduction`` (one add or compare per element read; a mean's division per
result is not counted), ``aten::pow`` with an exponent its kernel special-cases (2: x·x, 1;
3: x·x·x, 2; ½ and −½: a square root, 1; −1: 1; −2: 2), ``aten::cat`` and ``aten::gather``
copies (no FLOPs; a gather reads its index, one a row where its kernel says the index was
expanded along its last dimension, and the elements it picks), the backward of
silu (9 an element), sigmoid and tanh (3), the embedding's weight gradient (one add per
element of dy, into the rows its indices name: dy, the indices and those rows read and
written), the losses ``mse_loss`` ((x − t)²: 2; its backward 3) and ``nll_loss`` (one add a
row; the target and the score it picks read), the layer norm's backward (14 an element with
every gradient), gelu's backward (11 exact, 18 tanh), comparisons (1, a bool written),
``where`` and ``masked_fill_`` (no FLOPs), ``nan_to_num`` (3 compares), ``logit`` and its
backward (3, 5 with a clamp), logical operators (1), ``scatter_`` (a copy; 1 a value with a
reduce), ``max`` and ``min`` (a compare an element), ``linalg_vector_norm`` (2 an element for
the orders 0, 1, 2, ±∞), ``repeat_interleave`` with its ``output_size``, FBGEMM's operators
of recommendation models (FP8 and hybrid-FP8 quantization and back, the permutations of
pooled embeddings and of sparse features, running sums of lengths, the embedding indices'
bounds check, the table-batched embedding lookup's forward where its tables share one row
width: the arithmetic its CUDA kernels do), PyTorch's list operators
(``aten::_foreach_add_`` …: the elementwise step over every tensor of the list), and the
fused Adam and AdamW steps (``aten::_fused_adam_``,
``aten::_fused_adamw_``) the arithmetic PyTorch's CUDA kernel does for each parameter: with
m and v the moments, g the gradient,

* weight decay (where not 0): p −= (lr·λ)·p for AdamW, g += λ·p for Adam — 2;
* m = β₁·m + (1 − β₁)·g — 3; v = β₂·v + (1 − β₂)·g·g — 4;
* with amsgrad, v̂ = max(v̂, v) — 1; the denominator √v / √(1 − β₂ᵗ) + ε — 3;
* p −= (lr / (1 − β₁ᵗ))·m / denominator — 3; a gradient scale (AMP): g /= scale — 1,
  maximize: g = −g — 1

so 15 an element for AdamW with weight decay. Bytes: p, g, m and v read, p, m and v written
(v̂ read and written with amsgrad; g written back when scaled).

Bytes are the ideal traffic: every recorded input tensor read once and the output written
once (a GEMM's A, B and C, plus the bias of ``addmm``/``baddbmm``; attention's Q, K, V and O;
a convolution's input, weight, bias and output; an elementwise operator's inputs and its
broadcast output; a concatenation's inputs and the output they make, as many bytes again).
PyTorch records a concatenation's inputs, and an optimizer's, as ``TensorList`` with their
shapes and no element type: it is read from the kernel's name where the name says it (CUDA's
``CatArrayBatchedCopy<OpaqueType<2u>, …>``: 2-byte elements; ``FusedAdamMathFunctor<
c10::BFloat16, …>``; a list operator's ``BinaryOpScalarFunctor<float, …>``).

:func:`count_operator` returns an :class:`OpCount`, or a string saying why the operator's
work cannot be counted.
"""

from __future__ import annotations

import ast
import math
import re
from typing import Any

from workbench.model.dtypes import wider
from workbench.model.operations import NORM_FLOPS, STEP_OPS, Operation
from workbench.model.terms import causal_fraction
from workbench.records import record

__all__ = ["OpCount", "count_operator", "not_counted_reason", "convolution_outputs",
           "forward_convolution_key", "ELEMENT_TYPES", "COUNTED_OPERATORS",
           "ARGUMENT_OPERATORS", "KERNEL_OPERATORS"]

#: Kineto's ``Input type`` spellings → (precision, bytes per element).
ELEMENT_TYPES: dict[str, tuple[str, int]] = {
    "float": ("fp32", 4), "double": ("fp64", 8), "c10::Half": ("fp16", 2),
    "c10::BFloat16": ("bf16", 2), "c10::Float8_e4m3fn": ("fp8", 1),
    "c10::Float8_e5m2": ("fp8", 1), "c10::Float8_e4m3fnuz": ("fp8", 1),
    "c10::Float8_e5m2fnuz": ("fp8", 1), "int": ("int32", 4), "long int": ("int32", 8),
    "long": ("int32", 8),
    "short int": ("int32", 2), "signed char": ("int8", 1), "unsigned char": ("int8", 1),
    "bool": ("int8", 1),
}

_GEMM = {"aten::mm": (0, 1, None, False), "aten::addmm": (1, 2, 0, False),
         "aten::bmm": (0, 1, None, True), "aten::baddbmm": (1, 2, 0, True)}
_ATTENTION = ("aten::_scaled_dot_product_flash_attention",
              "aten::_scaled_dot_product_efficient_attention",
              "aten::_scaled_dot_product_cudnn_attention", "aten::scaled_dot_product_attention")
_ATTENTION_BACKWARD = ("aten::_scaled_dot_product_flash_attention_backward",
                       "aten::_scaled_dot_product_efficient_attention_backward",
                       "aten::_scaled_dot_product_cudnn_attention_backward")
#: Where each attention operator records ``is_causal`` among its arguments.
_CAUSAL_AT = {"aten::scaled_dot_product_attention": 5,
              "aten::_scaled_dot_product_flash_attention": 4,
              "aten::_scaled_dot_product_efficient_attention": 6,
              "aten::_scaled_dot_product_cudnn_attention": 6,
              "aten::_scaled_dot_product_flash_attention_backward": 11,
              "aten::_scaled_dot_product_efficient_attention_backward": 11,
              "aten::_scaled_dot_product_cudnn_attention_backward": 14}
_CONV = ("aten::convolution", "aten::_convolution")
#: Elementwise operators (``aten::`` name without a trailing ``_``) → the step kind of the
#: product's elementwise chain whose FLOPs per element they take.
_ELEMENTWISE = {
    "add": "add", "sub": "sub", "rsub": "sub", "mul": "mul", "div": "div", "neg": "scale",
    "relu": "relu", "clamp_min": "max", "clamp_max": "max", "clamp": "max", "maximum": "max",
    "minimum": "max", "threshold": "max", "threshold_backward": "max", "gelu": "gelu",
    "silu": "silu", "sigmoid": "sigmoid", "tanh": "tanh", "sin": "sin", "cos": "cos",
    "exp": "exp", "log": "log", "log2": "log", "log10": "log", "log1p": "log", "sqrt": "sqrt",
    "rsqrt": "sqrt", "square": "square", "copy": "copy", "clone": "copy", "fill": "copy",
    "zero": "copy", "addcmul": "fma", "addcdiv": "fma",
}
_NORMS = {"aten::layer_norm": "layernorm", "aten::native_layer_norm": "layernorm",
          "aten::rms_norm": "rmsnorm", "aten::_fused_rms_norm": "rmsnorm"}
_SOFTMAX = ("aten::softmax", "aten::_softmax", "aten::log_softmax", "aten::_log_softmax")
#: (grad_output, output, dim, input_dtype) → grad_input
_SOFTMAX_BACKWARD = ("aten::_softmax_backward_data", "aten::_log_softmax_backward_data")
#: Reductions over the dimensions recorded as their second argument (all when none) → the
#: reduction the product's ``reduction`` operation counts.
_REDUCTIONS = {"aten::sum": "sum", "aten::mean": "sum", "aten::amax": "max",
               "aten::amin": "max"}
_POW = ("aten::pow", "aten::pow_")
#: The exponents PyTorch's CUDA and CPU kernels compute without a general power → (FLOPs per
#: element, the arithmetic)
_POWERS: dict[float, tuple[int, str]] = {
    2: (1, "x·x"), 3: (2, "x·x·x"), 0.5: (1, "√x"), -0.5: (1, "1/√x (rsqrt, counted as 1)"),
    -1: (1, "1/x"), -2: (2, "1/(x·x)")}
#: Elementwise backward operators (the gradient dy, then the forward's input x or output y;
#: dx written) → (FLOPs per element, the arithmetic as PyTorch's kernel does it)
_ELEMENTWISE_BACKWARD: dict[str, tuple[int, str]] = {
    "aten::silu_backward": (9, "dy·s·(1 + x·(1 − s)) with s = 1/(1 + e⁻ˣ): 4 for s, 5 more"),
    "aten::sigmoid_backward": (3, "dy·y·(1 − y)"),
    "aten::tanh_backward": (3, "dy·(1 − y·y)"),
}
#: ``gelu``'s backward by its ``approximate`` argument → (FLOPs per element, the arithmetic
#: as PyTorch's kernel does it; erf and tanh counted as 1)
_GELU_BACKWARD = {
    "none": (11, "dy·(Φ + x·φ), Φ = ½(1 + erf(x/√2)) 4, φ = e^(−x²/2)/√(2π) 4, 3 more"),
    "tanh": (18, "dy·(½(1 + t) + ½x(1 − t²)·β(1 + 3κx²)), t = tanh(β(x + κx³)): 18")}
#: Comparisons: one compare per element, a bool (1 byte) written
_COMPARISONS = tuple(f"aten::{c}{tail}" for c in ("eq", "ne", "lt", "le", "gt", "ge")
                     for tail in ("", "_"))
#: A choice per element between two tensors (or scalars) by a bool condition: no arithmetic
_WHERE = ("aten::where",)
#: ``self`` set to a value where a bool mask is true: no arithmetic
_MASKED_FILL = ("aten::masked_fill", "aten::masked_fill_")
#: The layer norm's backward (dy, x, normalized_shape, mean, rstd, weight, bias,
#: output_mask)
_LAYER_NORM_BACKWARD = ("aten::native_layer_norm_backward",)
#: Copies of the elements an index tensor picks (no arithmetic)
_GATHER = ("aten::gather",)
#: The slices of ``self`` along ``dim`` that an index names, copied out
_INDEX_SELECT = ("aten::index_select",)
#: Each element of ``src`` added into the element of ``self`` its index names
_SCATTER_ADD = ("aten::scatter_add", "aten::scatter_add_")
#: A running sum along one dimension: one add per element
_CUMSUM = ("aten::cumsum", "aten::cumsum_")
#: A range written into its ``out`` tensor (start, end, step, out): no arithmetic counted
_ARANGE = ("aten::arange",)
#: The CUDA kernel PyTorch gathers whole rows with, for an index expanded along its last
#: dimension
_ROW_GATHER = "vectorized_gather_kernel"
#: The embedding's weight gradient: each row of dy added into the row of dW its index names
_EMBEDDING_BACKWARD = ("aten::embedding_dense_backward",)
#: The mean squared error: (x − t)² per element (its mean or sum a reduction of its own)
_MSE = ("aten::mse_loss",)
_MSE_BACKWARD = ("aten::mse_loss_backward",)
#: The negative log-likelihood over [N, C] scores (or one row of [C])
_NLL = ("aten::nll_loss_forward",)
_NLL_BACKWARD = ("aten::nll_loss_backward",)
#: PyTorch's lists of tensors operated on at once (``torch._foreach_add_`` …: the unfused
#: optimizers' steps) → their elementwise step; the element type is read from the kernel's
#: functor (``BinaryOpScalarFunctor<float, …>``)
_FOREACH: dict[str, str] = {
    f"aten::_foreach_{base}{tail}": base for base in (
        "add", "sub", "mul", "div", "neg", "sqrt", "exp", "addcmul", "addcdiv", "maximum",
        "minimum", "clamp_min", "clamp_max", "copy", "zero", "sigmoid", "tanh")
    for tail in ("", "_")}
_FOREACH_KERNEL = re.compile(r"\w*Functor<")
#: NaN and ±∞ replaced by finite values: three compares an element
_NAN_TO_NUM = ("aten::nan_to_num", "aten::nan_to_num_")
#: log(x/(1 − x)) (x clamped to [eps, 1 − eps] where eps is given) and its backward
_LOGIT = ("aten::logit", "aten::logit_")
_LOGIT_BACKWARD = ("aten::logit_backward",)
#: Logical operators: one operation an element, bools written (an in-place or out form writes
#: its own tensor's type)
_LOGICAL = tuple(f"aten::logical_{op}{tail}" for op in ("and", "or", "xor", "not")
                 for tail in ("", "_"))
#: ``src`` (or one value) written where ``index`` points: no arithmetic but a ``reduce``
_SCATTER = ("aten::scatter", "aten::scatter_")
#: ``max`` and ``min``: of every element (one argument), along a dimension (values and their
#: int64 indices), or of two tensors element by element
_MAX_MIN = ("aten::max", "aten::min")
#: A vector norm over some dimensions (all when none): per element |x| or x·x and a sum (or
#: a max) for the orders 0, 1, 2 and ±∞; a root a result for order 2
_VECTOR_NORM = ("aten::linalg_vector_norm",)
_NORM_ORDERS = (0, 1, 2, math.inf, -math.inf)
#: ``repeat_interleave(repeats, output_size)``: the indices of each repeat written
_REPEAT_INTERLEAVE = ("aten::repeat_interleave",)
#: FBGEMM (recommendation models): rowwise FP8 quantization (the row's scale in 8 bytes at its
#: end) and back, hybrid FP8 element by element, the permutations of pooled embeddings and of
#: sparse features, running sums of lengths, and the embedding indices' bounds check
_FP8_ROWWISE = ("fbgemm::FloatToFP8RowwiseQuantized",)
_FP8_ROWWISE_BACK = ("fbgemm::FP8RowwiseQuantizedToFloat",)
_HFP8 = ("fbgemm::FloatToHFP8Quantized",)
_HFP8_BACK = ("fbgemm::HFP8QuantizedToFloat",)
#: the ``SparseType`` codes FBGEMM's dequantization takes as its output type
_SPARSE_TYPES = {0: ("fp32", 4), 1: ("fp16", 2), 5: ("bf16", 2)}
_PERMUTE_POOLED = ("fbgemm::permute_pooled_embs", "fbgemm::permute_pooled_embs_auto_grad",
                   "fbgemm::permute_pooled_embs_split",
                   "fbgemm::permute_pooled_embs_auto_grad_split")
#: the backward of a permutation of pooled embeddings: the gradient permuted back
#: (its C++ class by FBGEMM's versions: a template on the GPU function, then a plain class)
_PERMUTE_POOLED_BACKWARD = (
    "torch::autograd::CppNode<fbgemm_gpu::PermutePooledEmbsFunction<"
    "&fbgemm_gpu::permute_pooled_embs_gpu> >",
    "torch::autograd::CppNode<fbgemm_gpu::PermutePooledEmbsFunctionSplit<"
    "&fbgemm_gpu::permute_pooled_embs_split_gpu> >",
    "torch::autograd::CppNode<fbgemm_gpu::PermutePooledEmbsFunction>")
_PERMUTE_SPARSE = ("fbgemm::permute_sparse_features", "fbgemm::permute_2D_sparse_data",
                   "fbgemm::permute_sparse_data")
_ASYNC_CUMSUM = {"fbgemm::asynchronous_complete_cumsum": 1,
                 "fbgemm::asynchronous_exclusive_cumsum": 0,
                 "fbgemm::asynchronous_inclusive_cumsum": 0}
_BOUNDS_CHECK = ("fbgemm::bounds_check_indices",)
#: A convolution's backward (grad_output, input, weight, bias_sizes, stride, padding,
#: dilation, transposed, output_padding, groups, output_mask)
_CONV_BACKWARD = ("aten::convolution_backward",)
#: cuDNN's, as an older PyTorch records it: (input, grad_output, weight, padding, stride,
#: dilation, groups, benchmark, deterministic, allow_tf32, output_mask), dx and dW only (its
#: dx and dW are operators of their own inside it, whose sizes are not recorded)
_CUDNN_CONV_BACKWARD = ("aten::cudnn_convolution_backward",)
#: Batch norms (input, weight, bias, running_mean, running_var, training, momentum, eps; the
#: no-training form without ``training``) and their backward (grad_output, input, weight,
#: running_mean, running_var, save_mean, save_invstd, train, eps, output_mask; cuDNN's and
#: MIOpen's take the input first and are always training's, with every gradient)
_BATCH_NORM = ("aten::native_batch_norm", "aten::cudnn_batch_norm", "aten::miopen_batch_norm",
               "aten::_native_batch_norm_legit", "aten::_native_batch_norm_legit_no_training")
_BATCH_NORM_BACKWARD = ("aten::native_batch_norm_backward",)
_BATCH_NORM_BACKWARD_INPUT_FIRST = ("aten::cudnn_batch_norm_backward",
                                    "aten::miopen_batch_norm_backward")
#: Max pooling (self, kernel_size, stride, padding, dilation, ceil_mode) and its backward
#: (grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices)
_MAX_POOL = ("aten::max_pool2d", "aten::max_pool2d_with_indices", "aten::max_pool3d",
             "aten::max_pool3d_with_indices")
_MAX_POOL_BACKWARD = ("aten::max_pool2d_with_indices_backward",
                      "aten::max_pool3d_with_indices_backward")
#: Adaptive average pooling (self, output_size) and its backward (grad_output, self)
_ADAPTIVE_AVG_POOL = ("aten::adaptive_avg_pool2d", "aten::_adaptive_avg_pool2d",
                      "aten::adaptive_avg_pool3d", "aten::_adaptive_avg_pool3d")
_ADAPTIVE_AVG_POOL_BACKWARD = ("aten::_adaptive_avg_pool2d_backward",
                               "aten::_adaptive_avg_pool3d_backward")
#: Operators whose work the recorded arguments cannot give, and why (by their name's pattern)
_NOT_COUNTABLE = (
    (re.compile(r"fbgemm::split_embedding_codegen_lookup_\w+_function(?:_pt2)?"),
     "FBGEMM's table-batched embedding lookup: the tables' row widths (total_D, D_offsets' "
     "values) and how its indices divide among the tables are not recorded (a newer FBGEMM "
     "records its forward's, split_embedding_codegen_forward_…_pt2_wrapper, which is "
     "counted)"),
    (re.compile(r"torch::autograd::CppNode<SplitLookupFunction_\w+_Op(?:_pt2)?>"
                r"|fbgemm::split_embedding_(?:nobag_)?backward_codegen_\w+"),
     "the backward of FBGEMM's table-batched embedding lookup (and its optimizer's update): "
     "how many distinct rows it updates is not recorded"),
    (re.compile(r"aten::(?:_index_put_impl_|index_put_?)"),
     "its indices (a list of optional tensors) are not recorded, so neither is how many "
     "elements it reads and writes"),
)
#: FBGEMM's table-batched embedding lookup, forward, as its PT2 wrapper records it
#: (host_weights, dev_weights, uvm_weights, lxu_cache_weights, weights_placements,
#: weights_offsets, D_offsets, total_D, max_D, hash_size_cumsum, indices, offsets,
#: pooling_mode, indice_weights, lxu_cache_locations, uvm_cache_stats, is_experimental,
#: output_dtype)
_TBE_FORWARD = ("fbgemm::split_embedding_codegen_forward_unweighted_pt2_wrapper",
                "fbgemm::split_embedding_codegen_forward_weighted_pt2_wrapper")
_TBE_POOLING = {0: "sum", 1: "mean"}
#: The 2-norm of each tensor of a list (``clip_grad_norm_``'s first step)
_FOREACH_NORM = ("aten::_foreach_norm",)
#: Operators whose inputs are one ``TensorList`` (recorded without an element type).
_CAT = ("aten::cat",)
#: A concatenation's CUDA kernel, whose first template argument is its element type.
_CAT_KERNEL = re.compile(r"CatArray\w*<")
#: An element type given by its size alone.
_OPAQUE = re.compile(r"OpaqueType<(\d+)u?>$")
#: The fused Adam steps (params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
#: lr, beta1, beta2, weight_decay, eps, amsgrad, maximize, grad_scale, found_inf) → the
#: optimizer's name.
_ADAM = {"aten::_fused_adamw_": "AdamW", "aten::_fused_adam_": "Adam"}
#: The kernel of a fused Adam step, whose first template argument is the parameters' type.
_ADAM_KERNEL = re.compile(r"FusedAdamMathFunctor<")
#: No dimension of a real tensor is this large (PyTorch's sizes are 64-bit signed)
_MOST_ELEMENTS = 2**63
#: Element bytes → the precision taken where only the size is known.
_BY_SIZE = {1: "int8", 2: "fp16", 4: "fp32", 8: "fp64"}

#: The operators whose count reads their recorded scalar arguments (``Concrete Inputs``:
#: stride and padding, the dimensions reduced, an exponent, a loss's reduction).
ARGUMENT_OPERATORS: frozenset[str] = frozenset([*_CONV, *_REDUCTIONS, *_POW, *_CAUSAL_AT,
                                                *_ADAM, *_NLL, *_NLL_BACKWARD,
                                                *_EMBEDDING_BACKWARD, *_ARANGE,
                                                "aten::gelu_backward", *_LAYER_NORM_BACKWARD,
                                                *_INDEX_SELECT, *_FOREACH_NORM, *_LOGIT,
                                                *_LOGIT_BACKWARD, *_SCATTER, *_MAX_MIN,
                                                *_VECTOR_NORM, *_REPEAT_INTERLEAVE,
                                                *_FP8_ROWWISE_BACK, *_PERMUTE_SPARSE,
                                                *_CONV_BACKWARD, *_CUDNN_CONV_BACKWARD,
                                                *_BATCH_NORM,
                                                *_BATCH_NORM_BACKWARD, *_MAX_POOL,
                                                *_ADAPTIVE_AVG_POOL, *_TBE_FORWARD])
#: The operators whose count reads the name of the kernel they launched (its element type).
KERNEL_OPERATORS: frozenset[str] = frozenset([*_CAT, *_ADAM, *_FOREACH, *_GATHER,
                                              *_FOREACH_NORM])


@record(frozen=True)
class OpCount:
    """What one operator did: FLOPs, ideal bytes, the precision of its ceiling, the execution
    unit (``matrix`` or ``vector``) and the arithmetic in words."""
    flops: float
    bytes: float
    precision: str
    unit: str
    formula: str


def _numel(dims: Any) -> int:
    return math.prod(int(d) for d in dims)


def _tensor(dims: list, types: list, i: int) -> tuple[list[int], str, int] | None:
    """The ``i``-th input as (shape, precision, element bytes) when it is a tensor."""
    if i >= len(dims) or i >= len(types):
        return None
    shape, kind = dims[i], types[i]
    if kind not in ELEMENT_TYPES or not isinstance(shape, list):
        return None
    if not all(isinstance(d, int) and 0 <= d < _MOST_ELEMENTS for d in shape):
        return None
    precision, size = ELEMENT_TYPES[kind]
    return shape, precision, size


def _concrete(concrete: list | None, i: int) -> Any:
    """A recorded scalar or list argument (``"[1, 1]"``, ``"1"``, ``"True"``), or ``None``."""
    if not concrete or i >= len(concrete) or not isinstance(concrete[i], str):
        return None
    text = concrete[i].strip()
    if not text:
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None


def _element(tensor: tuple[list[int], str, int]) -> str:
    """The element type a count names: its precision, but an integer of other than 32 bits
    by its width ("int64": counted at the int32 roof, there being no int64 peak, and 8 bytes
    an element)."""
    precision, size = tensor[1], tensor[2]
    return f"int{8 * size}" if precision == "int32" and size != 4 else precision


def _many(n: int, noun: str) -> str:
    """``n`` and the noun, plural but for one ("1 value", "262144 values")."""
    return f"{n} {noun}{'s' * (n != 1)}"


def _shape(shape: list[int]) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def count_operator(name: str, dims: list | None, types: list | None,
                   concrete: list | None = None, kernel: str | None = None,
                   output: list[int] | None = None) -> OpCount | str:
    """The work of operator ``name`` with recorded input shapes ``dims`` and element types
    ``types`` (see the module docstring), or why it cannot be counted. ``kernel``: the name
    of a kernel it launched (read by :data:`KERNEL_OPERATORS` alone); ``output``: the shape
    of a convolution's output where the trace tells it otherwise (:func:`convolution_outputs`:
    its stride and padding not recorded)."""
    if name not in COUNTED_OPERATORS:
        return not_counted_reason(name)
    if not dims or not types:
        return f"{name}: no input shapes recorded (profile with record_shapes=True)"
    types = _named_types(types)
    try:
        if output is not None and name in _CONV:
            return _conv(name, dims, types, concrete, output)
        return _RULES[name](name, dims, types, concrete, kernel)
    except _Uncounted as exc:
        return f"{name}: {exc}"
    except OverflowError:  # (a user's file: sizes whose product no float holds)
        return f"{name}: its recorded sizes are past any tensor's"


def not_counted_reason(name: str) -> str:
    """Why operator ``name``, which has no rule, is not counted: what its record lacks where
    that is known, else that it has no rule."""
    for pattern, why in _NOT_COUNTABLE:
        if pattern.fullmatch(name):
            return f"{name}: {why}"
    return f"{name}: no FLOP rule for this operator"


def _named_types(types: list) -> list[str]:
    """A record's ``Input type`` list with anything but a text read as naming no type."""
    return [t if isinstance(t, str) else "" for t in types]


class _Uncounted(Exception):
    pass


def _need(value, what: str):
    if value is None:
        raise _Uncounted(what)
    return value


def _gemm(name: str, dims: list, types: list) -> OpCount:
    ia, ib, ibias, batched = _GEMM[name]
    a = _need(_tensor(dims, types, ia), "first matrix not recorded as a tensor")
    b = _need(_tensor(dims, types, ib), "second matrix not recorded as a tensor")
    rank = 3 if batched else 2
    if len(a[0]) != rank or len(b[0]) != rank:
        raise _Uncounted(f"expected {rank}-d matrices, got {_shape(a[0])} and {_shape(b[0])}")
    batch = a[0][0] if batched else 1
    m, k = a[0][-2:]
    k2, n = b[0][-2:]
    if k != k2 or (batched and b[0][0] != batch):
        raise _Uncounted(f"shapes {_shape(a[0])} and {_shape(b[0])} do not multiply")
    counts = Operation("gemm", {"batch": batch, "m": m, "n": n, "k": k, "dtype": a[1],
                                "a_dtype": a[1], "b_dtype": b[1], "c_dtype": a[1]}).counts()
    nbytes = float(counts.bytes)
    extra = ""
    if ibias is not None:
        bias = _tensor(dims, types, ibias)
        if bias is not None:
            nbytes += _numel(bias[0]) * bias[2]
            extra = f" + bias {_shape(bias[0])}"
    product = f"{batch}·{m}·{n}·{k}" if batched else f"{m}·{n}·{k}"
    return OpCount(float(counts.flops), nbytes, wider(a[1], b[1]), "matrix",
                   f"{name} {_shape(a[0])}·{_shape(b[0])} {_element(a)}: 2·{product} FLOPs; "
                   f"bytes A + B + C{extra}")


def _attention(name: str, dims: list, types: list, concrete: list | None = None) -> OpCount:
    backward = name in _ATTENTION_BACKWARD
    first = 1 if backward else 0
    q, k, v = (_need(_tensor(dims, types, first + i), "query, key and value not recorded")
               for i in range(3))
    if any(len(t[0]) != 4 for t in (q, k, v)):
        raise _Uncounted("expected 4-d query, key and value [batch, heads, seq, dim]")
    b, h, s_q, d_q = q[0]
    s_k, d_v = k[0][2], v[0][3]
    size = q[2]
    out = b * h * s_q * d_v
    qkv = _numel(q[0]) + _numel(k[0]) + _numel(v[0])
    # a causal mask: the blocks above the diagonal are skipped, as the attention kind counts
    # a Flash kernel (c = 1 − min(s_q, s_k)/(2·s_k)); not recorded: every score
    causal = _concrete(concrete, _CAUSAL_AT[name]) if name in _CAUSAL_AT else None
    c = causal_fraction(s_q, s_k, True) if causal is True else 1
    scaled = f"·{c:g}" if causal is True else ""
    if backward:
        flops = 2 * b * h * s_q * s_k * (2 * d_q + 3 * d_v) * c
        # read Q, K, V, O and dO; write dQ, dK, dV
        nbytes = (qkv + 2 * out + qkv) * size
        formula = (f"2·{b}·{h}·{s_q}·{s_k}·(2·{d_q} + 3·{d_v}){scaled} FLOPs; "
                   "bytes Q K V O dO + dQ dK dV")
    else:
        flops = 2 * b * h * s_q * s_k * (d_q + d_v) * c
        nbytes = (qkv + out) * size
        formula = f"2·{b}·{h}·{s_q}·{s_k}·({d_q} + {d_v}){scaled} FLOPs; bytes Q + K + V + O"
    if causal is True:
        formula += f" (causal: the masked blocks skipped, c = 1 − min(s_q, s_k)/(2·s_k) = {c:g})"
    elif causal is None:
        formula += " (is_causal not recorded: every score counted)"
    return OpCount(float(flops), float(nbytes), q[1], "matrix",
                   f"{name} q {_shape(q[0])} {_element(q)}: {formula}")


def _conv(name: str, dims: list, types: list, concrete: list | None,
          output: list[int] | None = None) -> OpCount:
    x = _need(_tensor(dims, types, 0), "input not recorded as a tensor")
    w = _need(_tensor(dims, types, 1), "weight not recorded as a tensor")
    spatial = len(x[0]) - 2
    if spatial < 1 or len(w[0]) != len(x[0]):
        raise _Uncounted(f"input {_shape(x[0])} and weight {_shape(w[0])} do not convolve")
    told = ""
    if output is not None and _concrete(concrete, 3) is None:
        # (stride and padding not recorded: the output's shape, as the gradient of its
        # backward has it in the same trace)
        if len(output) != len(x[0]) or output[0] != x[0][0] or output[1] != w[0][0]:
            raise _Uncounted(f"output {_shape(output)} is not input {_shape(x[0])} convolved "
                             f"by {_shape(w[0])}")
        transposed, out_sp, c_out = False, list(output[2:]), output[1]
        told = (f" (its output {_shape(output)}, as its backward's gradient has it in this "
                "trace: stride and padding not recorded)")
    else:
        transposed, out_sp, c_out = _conv_output(x[0], w[0], concrete)
    positions = _numel(x[0][2:] if transposed else out_sp)
    flops = 2 * x[0][0] * _numel(w[0]) * positions
    bias = _tensor(dims, types, 2)
    out = x[0][0] * c_out * _numel(out_sp)
    nbytes = (_numel(x[0]) + _numel(w[0]) + out) * x[2] + (_numel(bias[0]) * bias[2]
                                                           if bias else 0)
    where = "input" if transposed else "output"
    return OpCount(float(flops), float(nbytes), wider(x[1], w[1]), "matrix",
                   f"{name} x {_shape(x[0])} w {_shape(w[0])} {_element(x)}: 2·N·|w|·({where} "
                   f"positions {positions}) FLOPs{told}; bytes x + w + bias + y")


def _conv_output(x: list[int], w: list[int], concrete: list | None
                 ) -> tuple[bool, list[int], int]:
    """Whether a convolution of input ``x`` by weight ``w`` is transposed, its output's
    positions and channels, from its recorded stride, padding, dilation, transposition,
    output padding and groups."""
    spatial = len(x) - 2
    missing = "stride, padding and dilation not recorded (Concrete Inputs, PyTorch ≥ 2.1)"
    stride, padding, dilation = (_need(_concrete(concrete, i), missing) for i in (3, 4, 5))
    transposed = bool(_concrete(concrete, 6))
    output_padding = _concrete(concrete, 7) or [0] * spatial
    groups = int(_concrete(concrete, 8) or 1)

    def per_dim(value) -> list[int]:
        values = list(value) if isinstance(value, list | tuple) else [value]
        return values * spatial if len(values) == 1 else values

    stride, padding, dilation, output_padding = map(per_dim, (stride, padding, dilation,
                                                              output_padding))
    kernel = w[2:]
    if transposed:
        return True, [(i - 1) * s - 2 * p + d * (kk - 1) + op + 1
                      for i, s, p, d, kk, op in zip(x[2:], stride, padding, dilation, kernel,
                                                    output_padding, strict=True)], w[1] * groups
    return False, [(i + 2 * p - d * (kk - 1) - 1) // s + 1
                   for i, s, p, d, kk in zip(x[2:], stride, padding, dilation, kernel,
                                             strict=True)], w[0]


def _conv_backward_tensors(name: str, dims: list, types: list) -> tuple:
    """A convolution backward's gradient, input and weight (each as :func:`_tensor` gives
    it, or None): cuDNN's records the input first."""
    cudnn = name in _CUDNN_CONV_BACKWARD
    return (_tensor(dims, types, 1 if cudnn else 0), _tensor(dims, types, 0 if cudnn else 1),
            _tensor(dims, types, 2))


def convolution_outputs(records) -> dict[tuple, list[int]]:
    """The output shape of each forward convolution, by its input's and weight's shapes, that
    the backward records ``records`` ((name, dims, types) of each operator) tell: a backward's
    gradient has its forward's output shape. Only where every backward of that input and
    weight says the same (two layers of one input and weight but other strides say nothing)."""
    seen: dict[tuple, set[tuple]] = {}
    for name, dims, types in records:
        if name not in _CONV_BACKWARD and name not in _CUDNN_CONV_BACKWARD:
            continue
        if not isinstance(dims, list) or not isinstance(types, list):
            continue
        dy, x, w = _conv_backward_tensors(name, dims, _named_types(types))
        if dy is None or x is None or w is None:
            continue
        seen.setdefault((tuple(x[0]), tuple(w[0])), set()).add(tuple(dy[0]))
    return {key: list(next(iter(shapes))) for key, shapes in seen.items() if len(shapes) == 1}


def forward_convolution_key(name: str, dims: Any, types: Any) -> tuple | None:
    """The key :func:`convolution_outputs` knows a forward convolution's record by (its input's
    and weight's shapes), or None for any other operator."""
    if name not in _CONV or not isinstance(dims, list) or not isinstance(types, list):
        return None
    types = _named_types(types)
    x, w = _tensor(dims, types, 0), _tensor(dims, types, 1)
    return (tuple(x[0]), tuple(w[0])) if x is not None and w is not None else None


def _norm(name: str, dims: list, types: list) -> OpCount:
    x = _need(_tensor(dims, types, 0), "input not recorded as a tensor")
    weight = _tensor(dims, types, 2)
    hidden = _numel(weight[0]) if weight and weight[0] else (x[0][-1] if x[0] else 0)
    if hidden <= 0 or _numel(x[0]) % hidden:
        raise _Uncounted(f"cannot tell the normalised size of {_shape(x[0])}")
    rows = _numel(x[0]) // hidden
    variant = _NORMS[name]
    counts = Operation("norm", {"variant": variant, "rows": rows, "hidden": hidden,
                                "dtype": x[1], "weight_dtype": weight[1] if weight else x[1]}
                       ).counts()
    return OpCount(float(counts.flops), float(counts.bytes), x[1], "vector",
                   f"{name} {_shape(x[0])} {_element(x)}: {variant} {NORM_FLOPS[variant]}·{rows}·"
                   f"{hidden} FLOPs; bytes x + weights + y")


def _softmax(name: str, dims: list, types: list) -> OpCount:
    x = _need(_tensor(dims, types, 0), "input not recorded as a tensor")
    if not x[0]:
        raise _Uncounted("a 0-d input")
    cols = x[0][-1]
    rows = _numel(x[0]) // cols if cols else 0
    counts = Operation("softmax", {"rows": rows, "cols": cols, "dtype": x[1]}).counts()
    return OpCount(float(counts.flops), float(counts.bytes), x[1], "vector",
                   f"{name} {_shape(x[0])} {_element(x)}: 5·{rows}·{cols} FLOPs; bytes x + y")


def _softmax_backward(name: str, dims: list, types: list) -> OpCount:
    dy = _need(_tensor(dims, types, 0), "gradient not recorded as a tensor")
    y = _need(_tensor(dims, types, 1), "output not recorded as a tensor")
    if dy[0] != y[0]:
        raise _Uncounted(f"gradient {_shape(dy[0])} and output {_shape(y[0])} differ")
    n = _numel(y[0])
    # per element: its part of the row's sum, exp (log-softmax) or a product (softmax), a
    # product and a difference
    return OpCount(float(4 * n), float(n * (dy[2] + y[2] + dy[2])), dy[1], "vector",
                   f"{name} {_shape(y[0])} {_element(dy)}: 4·{n} FLOPs (a row sum, a product or exp, "
                   f"a product and a difference per element); bytes dy + y + dx")


def _reduced_dims(over: Any, shape: list[int]) -> list[int]:
    """The dimensions of ``shape`` a reduction's recorded ``dim`` argument names (one or a
    list; None or [] : all of them), each once, in order; a value that names no dimension
    of it (a bool too: PyTorch records a dimension as an int) is not counted."""
    if over is None or over == []:
        return list(range(len(shape)))
    listed = over if isinstance(over, list | tuple) else [over]
    if not all(isinstance(d, int) and not isinstance(d, bool)
               and -len(shape) <= d < max(len(shape), 1) for d in listed):
        raise _Uncounted(f"dimensions {over!r} not of an input {_shape(shape)}")
    return sorted({d % len(shape) for d in listed}) if shape else []


def _reduction(name: str, dims: list, types: list, concrete: list | None) -> OpCount:
    x = _need(_tensor(dims, types, 0), "input not recorded as a tensor")
    shape = x[0]
    # the dimensions are a list argument (a lone scalar there is the dtype overload's type)
    listed_dims = len(types) > 1 and types[1] == "ScalarList"
    over = _concrete(concrete, 1) if listed_dims else None
    # a second argument whose value PyTorch did not record (before 2.1): the dimensions
    guessed = (not concrete and over is None and len(types) > 1
               and types[1] in ("ScalarList", ""))
    reduced = _reduced_dims(over, shape)
    n = math.prod(shape[d] for d in reduced)
    rows = _numel(shape) // n if n else 0
    op = _REDUCTIONS[name]
    counts = Operation("reduction", {"op": op, "n": n, "rows": rows, "dtype": x[1]}).counts()
    what = "one add" if op == "sum" else "one compare"
    return OpCount(float(counts.flops), float(counts.bytes), x[1], "vector",
                   f"{name} {_shape(shape)} {_element(x)} over {n} elements × {rows}: {what} per "
                   f"element, {rows}·{n} FLOPs; bytes x + result"
                   + (" (dimensions not recorded: taken as all)" if guessed else ""))


def _pow(name: str, dims: list, types: list, concrete: list | None) -> OpCount:
    exponent = _concrete(concrete, 1)
    rule = (_POWERS.get(exponent) if isinstance(exponent, int | float)
            and not isinstance(exponent, bool) else None)
    if rule is None:
        raise _Uncounted("a FLOP rule for the exponents 2, 3, ½, −½, −1 and −2 alone (a "
                         "general power has no fixed count); this one is "
                         + ("not recorded" if exponent is None else f"{exponent!r}"))
    x = _need(_tensor(dims, types, 0), "input not recorded as a tensor")
    n = _numel(x[0])
    per, what = rule
    return OpCount(float(per * n), float(2 * n * x[2]), x[1], "vector",
                   f"{name} {_shape(x[0])} {_element(x)} ^ {exponent:g}: {what}, {per}·{n} FLOPs; "
                   "bytes x + y")


def _cat(name: str, dims: list, kernel: str | None) -> OpCount:
    shapes = _need(_shapes(dims[0]), "its inputs' shapes not recorded (an older PyTorch "
                   "records a tensor list as [])")
    given = _first_template_argument(kernel or "", _CAT_KERNEL)
    if given is None:
        raise _Uncounted("element type not recorded (a TensorList) and not in its kernel's "
                         "name")
    opaque = _OPAQUE.search(given)
    if opaque is not None:
        size = int(opaque.group(1))
        precision = _BY_SIZE.get(size)
        what = (f"{8 * size}-bit elements (OpaqueType<{size}u> in its kernel's name; the "
                f"precision taken as {precision}, of that size)")
    else:
        precision, size = ELEMENT_TYPES.get(given, (None, 0))
        what = f"{given} (in its kernel's name)"
    if precision is None:
        raise _Uncounted(f"element type {given} of its kernel not known")
    n = sum(_numel(s) for s in shapes)
    return OpCount(0.0, float(2 * n * size), precision, "vector",
                   f"{name} {' + '.join(map(_shape, shapes))}, {what}: a copy, 0 FLOPs; "
                   f"bytes inputs + output = 2·{n}·{size}")


def _shapes(value: Any) -> list[list[int]] | None:
    """A recorded ``TensorList``'s shapes, or None where it is not one."""
    if isinstance(value, list) and value and all(
            isinstance(s, list) and all(isinstance(d, int) and 0 <= d < _MOST_ELEMENTS
                                        for d in s) for s in value):
        return value
    return None


def _adam(name: str, dims: list, types: list, concrete: list | None,
          kernel: str | None) -> OpCount:
    params = _need(_shapes(dims[0]), "parameters not recorded as a list of tensors")
    given = _first_template_argument(kernel or "", _ADAM_KERNEL)
    if given is None or given not in ELEMENT_TYPES:
        raise _Uncounted("element type not recorded (a TensorList) and not in its kernel's "
                         "name")
    precision, size = ELEMENT_TYPES[given]
    decay = _concrete(concrete, 9)
    amsgrad = _concrete(concrete, 11) is True
    maximize = _concrete(concrete, 12) is True
    scaled = len(types) > 13 and types[13] in ELEMENT_TYPES  # (grad_scale given)
    steps = [("m 3", 3), ("v 4", 4), ("denominator 3", 3), ("step 3", 3)]
    if decay != 0:
        steps.insert(0, ("weight decay 2" + ("" if isinstance(decay, int | float)
                                              else " (its value not recorded)"), 2))
    if amsgrad:
        steps.insert(-2, ("amsgrad's max 1", 1))
    if scaled:
        steps.insert(0, ("gradient scale 1", 1))
    if maximize:
        steps.insert(0, ("maximize 1", 1))
    per = sum(f for _, f in steps)
    n = sum(_numel(s) for s in params)
    moved = (4 + amsgrad) + (3 + amsgrad + scaled)
    return OpCount(float(per * n), float(moved * n * size), precision, "vector",
                   f"{name} ({_ADAM[name]}) over {len(params)} tensors, {n} elements of "
                   f"{given}: {per}·{n} FLOPs ({', '.join(w for w, _ in steps)}); bytes "
                   f"{moved}·{n}·{size} (p, g, m, v{', v̂' if amsgrad else ''} read; p, m, "
                   f"v{', v̂' if amsgrad else ''}{', g' if scaled else ''} written)")


def _first_template_argument(kernel: str, opening: re.Pattern[str]) -> str | None:
    """The first template argument after ``opening`` (which ends at its ``<``) in a kernel's
    name, or None."""
    found = opening.search(kernel)
    if found is None:
        return None
    depth, start = 0, found.end()
    for i in range(start, min(len(kernel), start + 300)):
        c = kernel[i]
        if c in "<(":
            depth += 1
        elif c in ">)" and depth:
            depth -= 1
        elif c in ",>" and not depth:
            return kernel[start:i].strip()
    return None


def _broadcast(shapes: list[list[int]]) -> list[int]:
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        sizes = {s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0} - {1}
        if len(sizes) > 1:
            raise _Uncounted(f"shapes {', '.join(map(_shape, shapes))} do not broadcast")
        out.append(sizes.pop() if sizes else 1)
    return out


def _elementwise(name: str, dims: list, types: list) -> OpCount:
    base = name.removeprefix("aten::").rstrip("_")
    step = _ELEMENTWISE[base]
    tensors = [t for t in (_tensor(dims, types, i) for i in range(len(dims))) if t is not None]
    if not tensors:
        raise _Uncounted("no tensor input recorded")
    per = STEP_OPS[step][0]
    if base in ("copy", "fill", "zero"):
        # copy_(self, src): read src, write self; fill_/zero_: write self only
        out_shape, precision, size = tensors[0]
        n = _numel(out_shape)
        read = sum(_numel(t[0]) * t[2] for t in tensors[1:2]) if base == "copy" else 0
        nbytes = read + n * size
        what = "src + self" if base == "copy" else "self (written)"
    else:
        out_shape = _broadcast([t[0] for t in tensors])
        precision, size = tensors[0][1], tensors[0][2]
        n = _numel(out_shape)
        nbytes = sum(_numel(t[0]) * t[2] for t in tensors) + n * size
        what = "inputs + output"
    return OpCount(float(per * n), float(nbytes), precision, "vector",
                   f"{name} {_shape(out_shape)} {precision}: {step} {per:g}·{n} FLOPs; "
                   f"bytes {what}")


def _elementwise_backward(name: str, dims: list, types: list, concrete: list | None
                          ) -> OpCount:
    dy = _need(_tensor(dims, types, 0), "gradient not recorded as a tensor")
    x = _need(_tensor(dims, types, 1), "the forward's tensor not recorded")
    shape = _broadcast([dy[0], x[0]])
    n = _numel(shape)
    told = ""
    if name == "aten::gelu_backward":
        given = _concrete(concrete, 2)
        form = given if given in _GELU_BACKWARD else "none"
        per, what = _GELU_BACKWARD[form]
        told = f", approximate={form!r}" + (
            "" if given in _GELU_BACKWARD else " (approximate not recorded: the exact form)")
    else:
        per, what = _ELEMENTWISE_BACKWARD[name]
    nbytes = _numel(dy[0]) * dy[2] + _numel(x[0]) * x[2] + n * dy[2]
    return OpCount(float(per * n), float(nbytes), dy[1], "vector",
                   f"{name} {_shape(shape)} {_element(dy)}{told}: {what}, {per}·{n} FLOPs; bytes dy "
                   "+ forward tensor + dx")


def _comparison(name: str, dims: list, types: list) -> OpCount:
    tensors = [t for t in (_tensor(dims, types, i) for i in range(min(len(dims), 2)))
               if t is not None]
    if not tensors:
        raise _Uncounted("no tensor input recorded")
    shape = _broadcast([t[0] for t in tensors])
    n = _numel(shape)
    return OpCount(float(n), float(sum(_numel(t[0]) * t[2] for t in tensors) + n),
                   tensors[0][1], "vector",
                   f"{name} {_shape(shape)} {_element(tensors[0])}: one compare per element, {n} "
                   f"FLOPs; bytes inputs + the bools written (1 byte each)")


def _where(name: str, dims: list, types: list) -> OpCount:
    condition = _need(_tensor(dims, types, 0), "condition not recorded as a tensor")
    if types[0] != "bool":
        raise _Uncounted(f"expected a bool condition, got {types[0] or 'no type'}")
    values = [t for t in (_tensor(dims, types, i) for i in (1, 2)) if t is not None]
    if not values:
        raise _Uncounted("neither choice recorded as a tensor")
    shape = _broadcast([condition[0], *(t[0] for t in values)])
    n = _numel(shape)
    read = _numel(condition[0]) + sum(_numel(t[0]) * t[2] for t in values)
    return OpCount(0.0, float(read + n * values[0][2]), values[0][1], "vector",
                   f"{name} {_shape(shape)} {_element(values[0])}: a choice per element by a bool, 0 "
                   f"FLOPs; bytes condition + the tensors chosen from + output")


def _masked_fill(name: str, dims: list, types: list) -> OpCount:
    x = _need(_tensor(dims, types, 0), "input not recorded as a tensor")
    mask = _need(_tensor(dims, types, 1), "mask not recorded as a tensor")
    n = _numel(x[0])
    return OpCount(0.0, float(2 * n * x[2] + _numel(mask[0]) * mask[2]), x[1], "vector",
                   f"{name} {_shape(x[0])} {_element(x)}: a value set where the mask is true, 0 "
                   f"FLOPs; bytes self read + mask + self written")


def _layer_norm_backward(name: str, dims: list, types: list, concrete: list | None
                         ) -> OpCount:
    dy = _need(_tensor(dims, types, 0), "gradient not recorded as a tensor")
    x = _need(_tensor(dims, types, 1), "input not recorded as a tensor")
    mean = _need(_tensor(dims, types, 3), "mean not recorded as a tensor")
    rstd = _need(_tensor(dims, types, 4), "rstd not recorded as a tensor")
    weight, bias = _tensor(dims, types, 5), _tensor(dims, types, 6)
    n = _numel(x[0])
    rows = _numel(mean[0])
    if not rows or n % rows or _numel(dy[0]) != n or _numel(rstd[0]) != rows:
        raise _Uncounted(f"cannot tell the rows of {_shape(x[0])} from mean {_shape(mean[0])}")
    hidden = n // rows
    mask = _concrete(concrete, 7)
    wants = (list(mask) if isinstance(mask, list) and len(mask) == 3 else
             [True, weight is not None, bias is not None])
    has_weight = weight is not None
    steps = []
    if wants[0]:
        steps += [("x̂ = (x − μ)·rstd 2", 2)] + ([("dy·γ 1", 1)] if has_weight else []) + [
            ("the two row sums 3", 3), ("dx = rstd·(g − (Σg + x̂·Σgx̂)/H) 5", 5)]
    if wants[1] and has_weight:
        steps += [("dγ += dy·x̂ 2", 2)] + ([("x̂ 2", 2)] if not wants[0] else [])
    if wants[2] and bias is not None:
        steps.append(("dβ += dy 1", 1))
    per = sum(f for _, f in steps)
    nbytes = (2 * n * x[2] + rows * (mean[2] + rstd[2]) + (hidden * weight[2] if weight else 0)
              + (n * x[2] if wants[0] else 0)
              + (hidden * weight[2] if weight and wants[1] else 0)
              + (hidden * bias[2] if bias and wants[2] else 0))
    said = "" if isinstance(mask, list) else " (output_mask not recorded: every gradient)"
    return OpCount(float(per * n), float(nbytes), x[1], "vector",
                   f"{name} {_many(rows, 'row')} × {hidden} {_element(x)}{said}: per element "
                   f"{', '.join(w for w, _ in steps)}, {per}·{n} FLOPs; bytes dy, x, μ, rstd, γ "
                   "read; dx, dγ, dβ written")


def _index_select(name: str, dims: list, types: list, concrete: list | None) -> OpCount:
    x = _need(_tensor(dims, types, 0), "input not recorded as a tensor")
    index = _need(_tensor(dims, types, 2), "index not recorded as a tensor")
    dim = _concrete(concrete, 1)
    if len(x[0]) == 1:
        dim = 0
    if not isinstance(dim, int) or isinstance(dim, bool) or not -len(x[0]) <= dim < len(x[0]):
        raise _Uncounted("the dimension selected along not recorded (Concrete Inputs)")
    along = x[0][dim]
    n = _numel(x[0]) // along * _numel(index[0]) if along else 0
    return OpCount(0.0, float(_numel(index[0]) * index[2] + 2 * n * x[2]), x[1], "vector",
                   f"{name} of {_shape(x[0])} by {_numel(index[0])} indices along dimension "
                   f"{dim % len(x[0])} {_element(x)}: {n} elements copied, 0 FLOPs; bytes index + "
                   "picked + output")


def _scatter_add(name: str, dims: list, types: list) -> OpCount:
    x = _need(_tensor(dims, types, 0), "input not recorded as a tensor")
    index = _need(_tensor(dims, types, 2), "index not recorded as a tensor")
    src = _need(_tensor(dims, types, 3), "source not recorded as a tensor")
    n = _numel(index[0])
    kept = _numel(x[0])
    return OpCount(float(n), float(n * (index[2] + src[2]) + 2 * kept * x[2]), x[1], "vector",
                   f"{name} of {_many(n, 'value')} into {_shape(x[0])} {_element(x)}: one add "
                   f"each, {n} FLOPs; bytes index + src + self read and written ({kept} "
                   "elements)")


def _cumsum(name: str, dims: list, types: list) -> OpCount:
    x = _need(_tensor(dims, types, 0), "input not recorded as a tensor")
    n = _numel(x[0])
    return OpCount(float(n), float(2 * n * x[2]), x[1], "vector",
                   f"{name} {_shape(x[0])} {_element(x)}: a running sum, one add per element, {n} "
                   "FLOPs; bytes x + y")


def _gather(name: str, dims: list, types: list, kernel: str | None) -> OpCount:
    x = _need(_tensor(dims, types, 0), "input not recorded as a tensor")
    index = _need(_tensor(dims, types, 2), "index not recorded as a tensor")
    n = _numel(index[0])
    if kernel is not None and _ROW_GATHER in kernel and len(index[0]) >= 2 and index[0][-1]:
        # PyTorch takes this kernel only for an index expanded along its last dimension
        # (stride 0: one index a row, each row of the input copied whole); the profiler
        # records the expanded shape
        rows = n // index[0][-1]
        return OpCount(0.0, float(rows * index[2] + 2 * n * x[2]), x[1], "vector",
                       f"{name} of {_shape(x[0])} by index {_shape(index[0])} {_element(x)}: whole "
                       f"rows of {index[0][-1]} copied ({_ROW_GATHER}: the index expanded "
                       f"along its last dimension, one a row), 0 FLOPs; bytes {rows} indices + "
                       f"picked + output = {rows}·{index[2]} + 2·{n}·{x[2]}")
    return OpCount(0.0, float(n * (index[2] + 2 * x[2])), x[1], "vector",
                   f"{name} of {_shape(x[0])} by index {_shape(index[0])} {_element(x)}: a copy of "
                   f"the {n} elements picked, 0 FLOPs; bytes index + picked + output = "
                   f"{n}·({index[2]} + 2·{x[2]})")


def _arange(name: str, dims: list, types: list, concrete: list | None) -> OpCount:
    out = _tensor(dims, types, 3)
    start, end, step = (_concrete(concrete, i) for i in range(3))
    if out is None or not all(isinstance(v, int | float) and not isinstance(v, bool)
                              and math.isfinite(v) for v in (start, end, step)) or not step:
        raise _Uncounted("start, end, step and the out tensor not recorded (its out variant, "
                         "which launches the kernel, records them)")
    n = max(0, math.ceil((end - start) / step))
    return OpCount(0.0, float(n * out[2]), out[1], "vector",
                   f"{name}({start:g}, {end:g}, {step:g}) {_element(out)}: {_many(n, 'value')} written, 0 "
                   f"FLOPs (start + i·step is index arithmetic); bytes the output = "
                   f"{n}·{out[2]}")


def _embedding_backward(name: str, dims: list, types: list, concrete: list | None) -> OpCount:
    dy = _need(_tensor(dims, types, 0), "gradient not recorded as a tensor")
    index = _need(_tensor(dims, types, 1), "indices not recorded as a tensor")
    n = _numel(index[0])
    if not dy[0] or _numel(dy[0]) != n * dy[0][-1]:
        raise _Uncounted(f"gradient {_shape(dy[0])} is not one row per index "
                         f"{_shape(index[0])}")
    d = dy[0][-1]
    by_freq = _concrete(concrete, 4) is True
    per = 2 if by_freq else 1
    return OpCount(float(per * n * d), float(n * (index[2] + 3 * d * dy[2])), dy[1], "vector",
                   f"{name} {n} indices × {d} {_element(dy)}: each row of dy added into the row of "
                   f"dW its index names, {per}·{n}·{d} FLOPs"
                   + (" (scaled by the index's frequency: a division more)" if by_freq else "")
                   + f"; bytes indices + dy + the rows of dW added into, read and written (at "
                   f"most one per index: taken as {n}) = {n}·({index[2]} + 3·{d}·{dy[2]}); "
                   "dW's zeroing is a kernel of its own")


def _mse(name: str, dims: list, types: list) -> OpCount:
    backward = name in _MSE_BACKWARD
    first = 1 if backward else 0
    x = _need(_tensor(dims, types, first), "input not recorded as a tensor")
    t = _need(_tensor(dims, types, first + 1), "target not recorded as a tensor")
    shape = _broadcast([x[0], t[0]])
    n = _numel(shape)
    nbytes = _numel(x[0]) * x[2] + _numel(t[0]) * t[2] + n * x[2]
    if backward:
        dy = _need(_tensor(dims, types, 0), "gradient not recorded as a tensor")
        nbytes += _numel(dy[0]) * dy[2]
        return OpCount(float(3 * n), float(nbytes), x[1], "vector",
                       f"{name} {_shape(shape)} {_element(x)}: norm·(x − t)·dy (norm = 2/n for a "
                       f"mean), 3·{n} FLOPs; bytes dy + x + t + dx")
    return OpCount(float(2 * n), float(nbytes), x[1], "vector",
                   f"{name} {_shape(shape)} {_element(x)}: (x − t)² per element, 2·{n} FLOPs (its "
                   "mean or sum is a reduction of its own); bytes x + t + the loss per element")


def _nll(name: str, dims: list, types: list, concrete: list | None) -> OpCount:
    backward = name in _NLL_BACKWARD
    first = 1 if backward else 0
    x = _need(_tensor(dims, types, first), "scores not recorded as a tensor")
    target = _need(_tensor(dims, types, first + 1), "target not recorded as a tensor")
    if len(x[0]) not in (1, 2):
        raise _Uncounted(f"expected [N, C] or [C] scores, got {_shape(x[0])}")
    rows = x[0][0] if len(x[0]) == 2 else 1
    weight = _tensor(dims, types, first + 2)
    wsize = weight[2] if weight is not None and weight[0] else 0  # (a class weight's)
    weighted = bool(wsize)
    reduction = _concrete(concrete, first + 3)
    picked = rows * (x[2] + target[2] + wsize)
    if backward:
        # −w·dy/total_weight written where each row's target points (dx zeroed by a kernel
        # of its own)
        per = 1 + weighted + (reduction == 1)
        dy = _need(_tensor(dims, types, 0), "gradient not recorded as a tensor")
        nbytes = rows * (target[2] + wsize + x[2]) + \
            _numel(dy[0]) * dy[2]
        value = "−" + "w·" * weighted + "dy" + "/total_weight" * (reduction == 1)
        return OpCount(float(per * rows), float(nbytes), x[1], "vector",
                       f"{name} {_shape(x[0])} {_element(x)}: {value} where each row's target "
                       f"points, {per}·{rows} FLOPs; bytes targets"
                       f"{' + weights' * weighted} + dy + the {rows} elements of dx written "
                       "(dx zeroed by a kernel of its own)")
    # each row: the score its target picks (times its class weight) summed; with a weight
    # the weights summed too
    per = 3 if weighted else 1
    out = rows * x[2] if reduction == 0 else 2 * x[2]
    return OpCount(float(per * rows), float(picked + out), x[1], "vector",
                   f"{name} {_shape(x[0])} {_element(x)}: −x[i, target i] summed"
                   f"{' with its class weight, and the weights summed' * weighted}, "
                   f"{per}·{rows} FLOPs; bytes the target, the score it picks"
                   f"{' and its weight' * weighted} of each row + the loss")


def _foreach(name: str, dims: list, types: list, kernel: str | None) -> OpCount:
    base = _FOREACH[name]
    lists = [(i, s) for i, s in enumerate(_shapes(d) if t == "TensorList" else None
                                          for d, t in zip(dims, types, strict=False))
             if s is not None]
    if not lists or lists[0][0] != 0:
        raise _Uncounted("its tensors not recorded as a list of tensors")
    given = _first_template_argument(kernel or "", _FOREACH_KERNEL)
    if given is None or given not in ELEMENT_TYPES:
        raise _Uncounted("element type not recorded (a TensorList) and not in its kernel's "
                         "name")
    precision, size = ELEMENT_TYPES[given]
    step = _ELEMENTWISE[base]
    per = STEP_OPS[step][0]
    n = sum(_numel(s) for s in lists[0][1])
    if any(len(s) != len(lists[0][1]) or sum(_numel(x) for x in s) != n for _, s in lists):
        raise _Uncounted("its lists of tensors differ in size")
    read = 0 if base == "zero" else (len(lists) - 1 if base == "copy" else len(lists))
    return OpCount(float(per * n), float((read + 1) * n * size), precision, "vector",
                   f"{name} over {len(lists[0][1])} tensors, {n} elements of {given}: {step} "
                   f"{per:g}·{n} FLOPs; bytes {read} list{'s' * (read != 1)} read + one "
                   f"written = {read + 1}·{n}·{size}")


def _foreach_norm(name: str, dims: list, types: list, concrete: list | None,
                  kernel: str | None) -> OpCount:
    tensors = _need(_shapes(dims[0]) if types[0] == "TensorList" else None,
                    "its tensors not recorded as a list of tensors")
    order = _concrete(concrete, 1)
    if order is not None and order != 2:
        raise _Uncounted(f"a FLOP rule for the 2-norm alone; this one is {order!r}")
    given = _first_template_argument(kernel or "", _FOREACH_KERNEL)
    if given is None or given not in ELEMENT_TYPES:
        raise _Uncounted("element type not recorded (a TensorList) and not in its kernel's "
                         "name")
    precision, size = ELEMENT_TYPES[given]
    n = sum(_numel(t) for t in tensors)
    k = len(tensors)
    return OpCount(float(2 * n + k), float((n + k) * size), precision, "vector",
                   f"{name} over {k} tensors, {n} elements of {given}: x·x and its sum per "
                   f"element, a square root per tensor, 2·{n} + {k} FLOPs"
                   + ("" if order is not None else " (the order not recorded: taken as 2)")
                   + f"; bytes the list + one norm per tensor = ({n} + {k})·{size}")


def _nan_to_num(name: str, dims: list, types: list) -> OpCount:
    x = _need(_tensor(dims, types, 0), "input not recorded as a tensor")
    n = _numel(x[0])
    return OpCount(float(3 * n), float(2 * n * x[2]), x[1], "vector",
                   f"{name} {_shape(x[0])} {_element(x)}: x ≠ x, x = +∞, x = −∞, three compares per "
                   f"element, 3·{n} FLOPs; bytes x + y")


def _logit(name: str, dims: list, types: list, concrete: list | None) -> OpCount:
    backward = name in _LOGIT_BACKWARD
    x = _need(_tensor(dims, types, 1 if backward else 0), "input not recorded as a tensor")
    eps = _concrete(concrete, 2 if backward else 1)
    given = len(types) > (2 if backward else 1) and types[2 if backward else 1] == "Scalar"
    clamped = isinstance(eps, int | float) and not isinstance(eps, bool) and eps >= 0
    n = _numel(x[0])
    if backward:
        dy = _need(_tensor(dims, types, 0), "gradient not recorded as a tensor")
        what, per = "dy/(x·(1 − x))", 3
        nbytes = (_numel(dy[0]) * dy[2] + n * x[2] + n * dy[2])
        moved = "dy + x + dx"
        if clamped:
            what, per = "0 outside [eps, 1 − eps] (2 compares), else dy/(x·(1 − x))", 5
    else:
        what, per = "log(x/(1 − x))", 3
        nbytes, moved = 2 * n * x[2], "x + y"
        if clamped:
            what, per = "x clamped to [eps, 1 − eps] (2 compares), log(x/(1 − x))", 5
    told = ("" if eps is not None or not given
            else " (eps not recorded: taken as none, no clamp)")
    return OpCount(float(per * n), float(nbytes), x[1], "vector",
                   f"{name} {_shape(x[0])} {_element(x)}{told}: {what}"
                   + ("" if backward else ", log counted as 1")
                   + f", {per}·{n} FLOPs; bytes {moved}")


def _logical(name: str, dims: list, types: list) -> OpCount:
    unary = name.startswith("aten::logical_not")
    inputs = [_tensor(dims, types, i) for i in range(1 if unary else 2)]
    if inputs[0] is None:
        raise _Uncounted("input not recorded as a tensor")
    tensors = [t for t in inputs if t is not None]
    shape = _broadcast([t[0] for t in tensors])
    n = _numel(shape)
    # the result's type: an out tensor's, self's in place, else bool
    out = _tensor(dims, types, len(inputs))
    size = out[2] if out is not None else (tensors[0][2] if name.endswith("_") else 1)
    return OpCount(float(n), float(sum(_numel(t[0]) * t[2] for t in tensors) + n * size),
                   tensors[0][1], "vector",
                   f"{name} {_shape(shape)} {_element(tensors[0])}: one logical operation per "
                   f"element, {n} FLOPs; bytes inputs + the result ({size} byte"
                   f"{'s' * (size != 1)} each)")


#: ``scatter``'s reductions that do arithmetic (one operation a value)
_SCATTER_REDUCE = ("add", "multiply", "sum", "prod", "mean", "amax", "amin")


def _scatter(name: str, dims: list, types: list, concrete: list | None) -> OpCount:
    x = _need(_tensor(dims, types, 0), "input not recorded as a tensor")
    index = _need(_tensor(dims, types, 2), "index not recorded as a tensor")
    src = _tensor(dims, types, 3)  # (else one value, a Scalar)
    n = _numel(index[0])
    kept = _numel(x[0])
    # (the reduce form: 'add' or 'multiply', one operation a value; PyTorch records no
    # string argument's value)
    reduce = _concrete(concrete, 4)
    per = 1 if len(dims) > 4 and (reduce is None or reduce in _SCATTER_REDUCE) else 0
    written = min(n, kept)
    nbytes = n * index[2] + (n * src[2] if src is not None else 0) + written * x[2]
    moved = "index" + " + src" * (src is not None) + f" + the {written} elements written"
    if per:
        nbytes += written * x[2]
        moved += " (read first)"
    if not name.endswith("_"):  # (out of place: self copied first)
        nbytes += 2 * kept * x[2]
        moved += f" + self copied ({kept} elements)"
    return OpCount(float(per * n), float(nbytes), x[1], "vector",
                   f"{name} of {_many(n, 'value')} into {_shape(x[0])} {_element(x)}"
                   + (f", reduce={reduce!r}" if reduce is not None else
                      ", reduce ('add' or 'multiply')" if per else "")
                   + (f": one operation each, {n}" if per else ": 0")
                   + f" FLOPs; bytes {moved}")


def _max_min(name: str, dims: list, types: list, concrete: list | None) -> OpCount:
    x = _need(_tensor(dims, types, 0), "input not recorded as a tensor")
    n = _numel(x[0])
    other = _tensor(dims, types, 1)
    if other is not None:  # (two tensors, element by element)
        shape = _broadcast([x[0], other[0]])
        m = _numel(shape)
        return OpCount(float(m), float(n * x[2] + _numel(other[0]) * other[2] + m * x[2]),
                       x[1], "vector",
                       f"{name} {_shape(shape)} {_element(x)} of two tensors: one compare per "
                       f"element, {m} FLOPs; bytes both + the result")
    if len(dims) == 1:  # (of every element)
        return OpCount(float(n), float((n + 1) * x[2]), x[1], "vector",
                       f"{name} {_shape(x[0])} {_element(x)} of every element: one compare each, "
                       f"{n} FLOPs; bytes x + the result")
    dim = _concrete(concrete, 1)
    if not isinstance(dim, int) or isinstance(dim, bool) or not x[0] or \
            not -len(x[0]) <= dim < len(x[0]):
        raise _Uncounted("the dimension reduced not recorded (Concrete Inputs)")
    along = x[0][dim]
    rows = n // along if along else 0
    return OpCount(float(n), float(n * x[2] + rows * (x[2] + 8)), x[1], "vector",
                   f"{name} {_shape(x[0])} {_element(x)} along dimension {dim % len(x[0])}: one "
                   f"compare per element, {n} FLOPs; bytes x + {_many(rows, 'value')} and their int64 "
                   "indices")


def _vector_norm(name: str, dims: list, types: list, concrete: list | None) -> OpCount:
    x = _need(_tensor(dims, types, 0), "input not recorded as a tensor")
    shape = x[0]
    order = _concrete(concrete, 1)
    if order is None and concrete and len(concrete) > 1 and concrete[1] in ("inf", "-inf"):
        order = float(concrete[1])  # (how Concrete Inputs writes an infinite order)
    if order is not None and order not in _NORM_ORDERS:
        raise _Uncounted(f"a FLOP rule for the orders 0, 1, 2 and ±∞ alone (a general order "
                         f"takes a power of each element); this one is {order!r}")
    over = _concrete(concrete, 2)
    reduced = _reduced_dims(over, shape)
    n = _numel(shape)
    per_result = math.prod(shape[d] for d in reduced)
    rows = n // per_result if per_result else 0
    roots = rows if order in (2, None) else 0
    told = []
    if order is None:
        told.append("the order not recorded: taken as 2 (1, 0 and ±∞ cost as much an "
                    "element)")
    if over is None and len(shape) > 1 and not concrete:
        told.append("dimensions not recorded: taken as all")
    return OpCount(float(2 * n + roots), float((n + rows) * x[2]), x[1], "vector",
                   f"{name} {_shape(shape)} {_element(x)}, order "
                   f"{2 if order is None else order}, over {per_result} elements × {rows}: "
                   f"|x| or x·x and a sum (or max) per element"
                   + (", a square root per result" if roots else "")
                   + f", 2·{n}" + (f" + {roots}" if roots else "") + " FLOPs"
                   + (f" ({'; '.join(told)})" if told else "") + "; bytes x + the results")


def _repeat_interleave(name: str, dims: list, types: list, concrete: list | None
                       ) -> OpCount:
    last = len(dims) - 1
    size = _concrete(concrete, last)
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise _Uncounted("its output's size (the sum of the repeats) not recorded "
                         "(output_size, in Concrete Inputs)")
    repeats = _need(_tensor(dims, types, 1 if last >= 2 else 0),
                    "repeats not recorded as a tensor")
    k = _numel(repeats[0])
    if last >= 2:  # (self, repeats, dim, output_size): self's slices, picked again
        x = _need(_tensor(dims, types, 0), "input not recorded as a tensor")
        if len(x[0]) != 1:
            raise _Uncounted(f"a rule for a 1-d input alone; this one is {_shape(x[0])}")
        return OpCount(float(k), float(k * repeats[2] + k * x[2] + size * x[2]), x[1],
                       "vector",
                       f"{name} of {_shape(x[0])} {_element(x)} to {_many(size, 'value')}: the repeats' "
                       f"running sum, {k} FLOPs; bytes repeats + x + the output")
    return OpCount(float(k), float(k * repeats[2] + size * 8), "int32", "vector",
                   f"{name} of {k} repeats to {size} int64 indices: the repeats' running sum, "
                   f"{k} FLOPs; bytes repeats + the indices written = {k}·{repeats[2]} + "
                   f"{size}·8")


def _output_type(concrete: list | None, types: list, at: int) -> tuple[str, int, str]:
    """The output type FBGEMM is told at argument ``at`` (a ``SparseType`` code): its
    precision, its bytes an element, and what the formula says where the code is not
    recorded (taken as FP32, as FBGEMM's default); a code of another type is not counted."""
    code = _concrete(concrete, at)
    if code is not None and (not isinstance(code, int) or isinstance(code, bool)
                             or code not in _SPARSE_TYPES):
        raise _Uncounted(f"output type {code!r} not one of FP32, FP16, BF16")
    precision, size = _SPARSE_TYPES[code if code is not None else 0]
    told = " (its output type not recorded, taken as FP32)" if (
        len(types) > at and code is None) else ""
    return precision, size, told


def _fp8_rowwise(name: str, dims: list, types: list, concrete: list | None) -> OpCount:
    back = name in _FP8_ROWWISE_BACK
    x = _need(_tensor(dims, types, 0), "input not recorded as a tensor")
    if not x[0]:
        raise _Uncounted("expected rows, got a 0-d input")
    cols = x[0][-1]
    rows = _numel(x[0]) // cols if cols else 0
    aligned = (cols + 3) // 4 * 4
    if back:
        out_cols = aligned - 8
        if out_cols <= 0:
            raise _Uncounted(f"rows of {cols} bytes hold no values (8 hold the scale)")
        precision, size, told = _output_type(concrete, types, 2)
        n = rows * out_cols
        return OpCount(float(2 * n), float(rows * cols + n * size), "fp32", "vector",
                       f"{name} {_shape(x[0])} (rows of {cols} bytes) to {precision}{told}: "
                       "each FP8 "
                       f"value ·2^(127 − bias) and ÷ its row's scale, 2·{n} FLOPs; bytes the "
                       f"rows read + {rows}·{out_cols} values written = {rows}·{cols} + "
                       f"{n}·{size}")
    n = rows * cols
    return OpCount(float(7 * n + 2 * rows), float(n * x[2] + rows * (aligned + 8)), x[1],
                   "vector",
                   f"{name} {_shape(x[0])} {_element(x)} to FP8 by rows: per element |x| and the "
                   f"row's max 2, x·scale 1, the 8-bit conversion's min, compare and rounding "
                   f"add and subtract 4; the scale max_pos/(ε + max) 2 a row; 7·{n} + 2·{rows} "
                   f"FLOPs; bytes x + {_many(rows, 'row')} of {aligned} + 8 bytes (the scale)")


def _hfp8(name: str, dims: list, types: list) -> OpCount:
    x = _need(_tensor(dims, types, 0), "input not recorded as a tensor")
    n = _numel(x[0])
    if name in _HFP8_BACK:
        return OpCount(float(n), float(n * x[2] + 4 * n), "fp32", "vector",
                       f"{name} {_shape(x[0])} hybrid FP8 to fp32: one multiply per value "
                       f"(by 2^(127 − bias)), {n} FLOPs; bytes x + the floats = {n}·{x[2]} + "
                       f"{n}·4")
    return OpCount(float(4 * n), float(n * x[2] + n), x[1], "vector",
                   f"{name} {_shape(x[0])} {_element(x)} to hybrid FP8: the conversion's min, "
                   f"compare and rounding add and subtract, 4·{n} FLOPs; bytes x + one byte "
                   "a value")


def _permute_pooled(name: str, dims: list, types: list) -> OpCount:
    x = _need(_tensor(dims, types, 0), "embeddings not recorded as a tensor")
    n = _numel(x[0])
    lists = [t for t in (_tensor(dims, types, i) for i in (1, 2)) if t is not None]
    small = sum(_numel(t[0]) * t[2] for t in lists)
    return OpCount(0.0, float(2 * n * x[2] + small), x[1], "vector",
                   f"{name} {_shape(x[0])} {_element(x)}: each table's columns moved to its place, "
                   f"a copy, 0 FLOPs; bytes x + the permuted copy"
                   + (" + the offsets and the permutation" if lists else ""))


def _permute_sparse(name: str, dims: list, types: list, concrete: list | None) -> OpCount:
    permute = _need(_tensor(dims, types, 0), "permutation not recorded as a tensor")
    lengths = _need(_tensor(dims, types, 1), "lengths not recorded as a tensor")
    indices = _need(_tensor(dims, types, 2), "indices not recorded as a tensor")
    weights = _tensor(dims, types, 3)
    if len(lengths[0]) != 2:
        raise _Uncounted(f"expected lengths [T, B], got {_shape(lengths[0])}")
    features, batch = lengths[0]
    out_features = _numel(permute[0])
    n = _numel(indices[0])
    total = _concrete(concrete, 4) if name != "fbgemm::permute_sparse_features" else None
    if isinstance(total, int) and not isinstance(total, bool) and total >= 0:
        out, said = total, "the indices' count recorded"
    elif out_features == features:
        out, said = n, "as many features out as in, a permutation"
    else:
        raise _Uncounted(f"{out_features} features out of {features}: the permuted indices' "
                         "count (the sum of their lengths) not recorded")
    nbytes = (out_features * permute[2] + (features + out_features) * batch * lengths[2]
              + (n + out) * indices[2] + ((n + out) * weights[2] if weights else 0))
    sums = (features + out_features) * batch
    return OpCount(float(sums), float(nbytes), indices[1], "vector",
                   f"{name} lengths {_shape(lengths[0])} indices {_shape(indices[0])} "
                   f"{_element(indices)}, to {out_features} features ({said}) and {out} indices: the "
                   f"lengths' running sums in and out, {sums} FLOPs; "
                   f"bytes the permutation + lengths in and out + indices"
                   + " and weights" * bool(weights) + " in and out")


def _async_cumsum(name: str, dims: list, types: list) -> OpCount:
    x = _need(_tensor(dims, types, 0), "input not recorded as a tensor")
    n = _numel(x[0])
    out = n + _ASYNC_CUMSUM[name]
    return OpCount(float(n), float((n + out) * x[2]), x[1], "vector",
                   f"{name} {_shape(x[0])} {_element(x)}: a running sum, one add per element, {n} "
                   f"FLOPs; bytes x + {out} sums")


def _bounds_check(name: str, dims: list, types: list) -> OpCount:
    rows = _need(_tensor(dims, types, 0), "the tables' row counts not recorded as a tensor")
    indices = _need(_tensor(dims, types, 1), "indices not recorded as a tensor")
    offsets = _need(_tensor(dims, types, 2), "offsets not recorded as a tensor")
    n = _numel(indices[0])
    bags = max(0, _numel(offsets[0]) - 1)
    nbytes = (_numel(rows[0]) * rows[2] + n * indices[2] + _numel(offsets[0]) * offsets[2])
    return OpCount(float(2 * n + 2 * bags), float(nbytes), indices[1], "vector",
                   f"{name} indices {_shape(indices[0])} offsets {_shape(offsets[0])} "
                   f"{_element(indices)} ({bags} bags): 0 ≤ index < its table's rows, two "
                   f"compares an index, and a bag's start and end two more, 2·{n} + 2·{bags} "
                   "FLOPs; bytes the row counts, indices and offsets read (written only where "
                   "out of bounds)")


def _conv_backward(name: str, dims: list, types: list, concrete: list | None) -> OpCount:
    cudnn = name in _CUDNN_CONV_BACKWARD
    gradient, given, weight = _conv_backward_tensors(name, dims, types)
    dy = _need(gradient, "gradient not recorded as a tensor")
    x = _need(given, "input not recorded as a tensor")
    w = _need(weight, "weight not recorded as a tensor")
    if len(x[0]) < 3 or len(w[0]) != len(x[0]) or len(dy[0]) != len(x[0]) \
            or dy[0][0] != x[0][0]:
        raise _Uncounted(f"gradient {_shape(dy[0])}, input {_shape(x[0])} and weight "
                         f"{_shape(w[0])} are not a convolution's")
    told = []
    transposed = False if cudnn else _concrete(concrete, 7)
    if not isinstance(transposed, bool):
        # (a transposed convolution's weight is [C_in, C_out/groups, …]: told by the shapes
        # where they tell it)
        transposed = w[0][0] == x[0][1] and w[0][0] != dy[0][1]
        told.append(f"transposed not recorded: taken as {transposed}")
    mask = _concrete(concrete, 10)
    if cudnn and isinstance(mask, list) and len(mask) == 2:
        mask = [*mask, False]  # (no bias gradient: an operator of its own)
    if not (isinstance(mask, list) and len(mask) == 3):
        bias = None if cudnn else _concrete(concrete, 3)
        mask = [True, True, bool(bias) and bias != [0]]
        told.append("output_mask not recorded: dx and dW")
    # as many FLOPs as the forward for each of dx and dW: 2·N·|w|·(the forward's output
    # positions: dy's; a transposed one's input positions: x's)
    positions = _numel((x if transposed else dy)[0][2:])
    forward = 2 * x[0][0] * _numel(w[0]) * positions
    flops = forward * (bool(mask[0]) + bool(mask[1]))
    size = x[2]
    n_dy, n_x, n_w = _numel(dy[0]), _numel(x[0]), _numel(w[0])
    channels = dy[0][1]
    nbytes = (n_dy * dy[2] + (n_w * w[2] if mask[0] else 0) + (n_x * size if mask[1] else 0)
              + (n_x * size if mask[0] else 0) + (n_w * w[2] if mask[1] else 0)
              + (channels * size if mask[2] else 0))
    wanted = [g for g, m in zip(("dx", "dW", "db"), mask, strict=True) if m]
    return OpCount(float(flops), float(nbytes), wider(x[1], w[1]), "matrix",
                   f"{name} dy {_shape(dy[0])} x {_shape(x[0])} w {_shape(w[0])} {_element(x)} "
                   f"({', '.join(wanted) or 'nothing'}"
                   + (f"; {'; '.join(told)}" if told else "") + "): each of dx and dW "
                   f"2·N·|w|·({'input' if transposed else 'output'} positions {positions}) "
                   f"FLOPs, as the forward (db's sum not counted); bytes dy, w (for dx), x "
                   "(for dW) read; the gradients asked for written")


def _batch_norm(name: str, dims: list, types: list, concrete: list | None) -> OpCount:
    x = _need(_tensor(dims, types, 0), "input not recorded as a tensor")
    if len(x[0]) < 2:
        raise _Uncounted(f"expected [N, C, …], got {_shape(x[0])}")
    channels = x[0][1]
    n = _numel(x[0])
    if name == "aten::_native_batch_norm_legit_no_training":
        training, told = False, ""
    else:
        training = _concrete(concrete, 5)
        told = "" if isinstance(training, bool) else " (training not recorded: taken as true)"
        training = training is not False
    small = sum(_numel(t[0]) * t[2] for t in (_tensor(dims, types, i) for i in range(1, 5))
                if t is not None)
    if training:
        per, what = 8, ("mean 1, variance 3, normalise 2, scale and shift 2 per element (the "
                        "running statistics' update, a few a channel, not counted)")
    else:
        per, what = 4, "(x − μ)·rstd·γ + β, 4 per element, from the running statistics"
    return OpCount(float(per * n), float(2 * n * x[2] + small), x[1], "vector",
                   f"{name} {_shape(x[0])} {_element(x)}, {'training' if training else 'eval'}"
                   f"{told}, {channels} channels: {what}, {per}·{n} FLOPs; bytes x + y + the "
                   "per-channel weights and statistics")


def _batch_norm_backward(name: str, dims: list, types: list, concrete: list | None
                         ) -> OpCount:
    input_first = name in _BATCH_NORM_BACKWARD_INPUT_FIRST
    dy = _need(_tensor(dims, types, 1 if input_first else 0), "gradient not recorded as a tensor")
    x = _need(_tensor(dims, types, 0 if input_first else 1), "input not recorded as a tensor")
    if len(x[0]) < 2 or _numel(dy[0]) != _numel(x[0]):
        raise _Uncounted(f"gradient {_shape(dy[0])} and input {_shape(x[0])} differ")
    channels = x[0][1]
    n = _numel(x[0])
    told = []
    if input_first:  # (cuDNN's and MIOpen's: training's, every gradient)
        training, mask = True, [True, True, True]
    else:
        training = _concrete(concrete, 7)
        if not isinstance(training, bool):
            told.append("train not recorded: taken as true")
            training = True
        mask = _concrete(concrete, 9)
        if not (isinstance(mask, list) and len(mask) == 3):
            told.append("output_mask not recorded: every gradient")
            mask = [True, True, True]
    if training:
        # the per-channel sums Σdy and Σdy·x̂ are dβ and dγ themselves
        steps = [("x̂ 2", 2), ("Σdy and Σdy·x̂ 3", 3)] if any(mask) else []
        if mask[0]:
            steps.append(("dx = γ·rstd·(dy − (Σdy + x̂·Σdy·x̂)/M) 5", 5))
    else:
        steps = [("dx = dy·γ·rstd 1", 1)] if mask[0] else []
        if mask[1]:
            steps += [("x̂ 2", 2), ("dγ += dy·x̂ 2", 2)]
        if mask[2]:
            steps.append(("dβ += dy 1", 1))
    per = sum(f for _, f in steps)
    small = 3 * channels * x[2] + sum(channels * x[2] for m in mask[1:] if m)
    nbytes = 2 * n * x[2] + (n * x[2] if mask[0] else 0) + small
    return OpCount(float(per * n), float(nbytes), x[1], "vector",
                   f"{name} {_shape(x[0])} {_element(x)}, {'training' if training else 'eval'}"
                   + (f" ({'; '.join(told)})" if told else "")
                   + f": per element {', '.join(w for w, _ in steps) or 'nothing'}, {per}·{n} "
                   "FLOPs; bytes dy, x read, dx written, and the per-channel γ, statistics "
                   "and dγ, dβ")


def _pool_sizes(x: list[int], concrete: list | None, first: int) -> tuple[list[int], ...]:
    """A max pool's kernel, stride, padding and dilation (``Concrete Inputs`` from index
    ``first``), one a pooled dimension, and its ceil_mode."""
    kernel = _concrete(concrete, first)
    missing = "kernel size, stride and padding not recorded (Concrete Inputs, PyTorch ≥ 2.1)"
    if kernel is None:
        raise _Uncounted(missing)
    kernel = kernel if isinstance(kernel, list) else [kernel]
    rank = len(x) - 2 if len(x) > 2 else 0
    if not kernel or rank < 1:
        raise _Uncounted(f"a pool of {_shape(x)} by {kernel!r} not understood")
    if len(kernel) == 1:
        kernel = kernel * rank

    def given(i: int, default: list[int]) -> list[int]:
        value = _concrete(concrete, first + i)
        if value is None or value == []:
            return default
        values = value if isinstance(value, list) else [value]
        return values * len(kernel) if len(values) == 1 else values

    stride = given(1, kernel)
    padding = given(2, [0] * len(kernel))
    dilation = given(3, [1] * len(kernel))
    ceil = _concrete(concrete, first + 4) is True
    sizes = (kernel, stride, padding, dilation)
    if any(len(v) != len(kernel) or not all(isinstance(d, int) and not isinstance(d, bool)
                                            for d in v) for v in sizes) \
            or len(kernel) > len(x) or min(kernel + stride + dilation) < 1 or min(padding) < 0:
        raise _Uncounted(f"a pool of {_shape(x)} by {kernel!r} not understood")
    out = []
    for size, k, s_, p_, d in zip(x[-len(kernel):], kernel, stride, padding, dilation,
                                  strict=True):
        span = size + 2 * p_ - d * (k - 1) - 1
        o = (-(-span // s_) if ceil else span // s_) + 1
        if ceil and (o - 1) * s_ >= size + p_:
            o -= 1
        out.append(max(0, o))
    return kernel, out, [ceil]


def _max_pool(name: str, dims: list, types: list, concrete: list | None) -> OpCount:
    x = _need(_tensor(dims, types, 0), "input not recorded as a tensor")
    kernel, out_sp, _ceil = _pool_sizes(x[0], concrete, 1)
    lead = _numel(x[0][:len(x[0]) - len(kernel)])
    outputs = lead * _numel(out_sp)
    window = _numel(kernel)
    indices = 8 if "with_indices" in name else 0
    return OpCount(float(window * outputs), float(_numel(x[0]) * x[2] + outputs * (x[2] + indices)),
                   x[1], "vector",
                   f"{name} {_shape(x[0])} {_element(x)} by {'×'.join(map(str, kernel))} to "
                   f"{'×'.join(map(str, out_sp))}: a compare per element of each window, "
                   f"{window}·{outputs} FLOPs; bytes x + the maxima"
                   + (" and their int64 indices" if indices else ""))


def _max_pool_backward(name: str, dims: list, types: list) -> OpCount:
    dy = _need(_tensor(dims, types, 0), "gradient not recorded as a tensor")
    x = _need(_tensor(dims, types, 1), "input not recorded as a tensor")
    m, n = _numel(dy[0]), _numel(x[0])
    return OpCount(float(m), float(m * (dy[2] + 8) + n * x[2]), x[1], "vector",
                   f"{name} dy {_shape(dy[0])} to dx {_shape(x[0])} {_element(x)}: each gradient "
                   f"added at its maximum's place, {m} FLOPs; bytes dy + the int64 indices "
                   "read, dx written")


def _adaptive_windows(x: list[int], out: list[int]) -> int:
    """How many elements the windows of an adaptive pool of ``x``'s last dimensions into
    ``out`` cover in all (a window of dimension i spans floor(i·n/o) to ceil((i + 1)·n/o))."""
    total = 1
    for n, o in zip(x[-len(out):], out, strict=True):
        total *= sum(-(-(i + 1) * n // o) - i * n // o for i in range(o))
    return total


def _adaptive_avg_pool(name: str, dims: list, types: list, concrete: list | None
                       ) -> OpCount:
    backward = name in _ADAPTIVE_AVG_POOL_BACKWARD
    if backward:
        dy = _need(_tensor(dims, types, 0), "gradient not recorded as a tensor")
        x = _need(_tensor(dims, types, 1), "input not recorded as a tensor")
        rank = 3 if "3d" in name else 2
        out = dy[0][-rank:]
    else:
        x = _need(_tensor(dims, types, 0), "input not recorded as a tensor")
        given = _concrete(concrete, 1)
        if given is None:
            raise _Uncounted("output size not recorded (Concrete Inputs, PyTorch ≥ 2.1)")
        out = given if isinstance(given, list) else [given]
    if not out or len(out) >= len(x[0]) or not all(
            isinstance(o, int) and not isinstance(o, bool) and o >= 1 for o in out) \
            or any(o > 100_000 for o in out):
        raise _Uncounted(f"an adaptive pool of {_shape(x[0])} to {out!r} not understood")
    lead = _numel(x[0][:len(x[0]) - len(out)])
    outputs = lead * _numel(out)
    covered = lead * _adaptive_windows(x[0], out)
    n = _numel(x[0])
    flops = covered + outputs
    grid = "×".join(map(str, out))
    if backward:
        return OpCount(float(flops), float(outputs * dy[2] + n * x[2]), x[1], "vector",
                       f"{name} to {_shape(x[0])} from {grid} {_element(x)}: each window's gradient "
                       f"÷ its size, added over it, {covered} + {outputs} FLOPs; bytes dy + "
                       "dx")
    return OpCount(float(flops), float(n * x[2] + outputs * x[2]), x[1], "vector",
                   f"{name} {_shape(x[0])} {_element(x)} to {grid}: each window summed ({covered} "
                   f"adds in all) and ÷ its size ({outputs}), {covered} + {outputs} FLOPs; "
                   "bytes x + y")


def _tbe_forward(name: str, dims: list, types: list, concrete: list | None) -> OpCount:
    weights = next((t for t in (_tensor(dims, types, i) for i in range(3))
                    if t is not None and _numel(t[0])), None)
    weights = _need(weights, "its embedding tables not recorded as a tensor")
    d_offsets = _need(_tensor(dims, types, 6), "D_offsets not recorded as a tensor")
    indices = _need(_tensor(dims, types, 10), "indices not recorded as a tensor")
    offsets = _need(_tensor(dims, types, 11), "offsets not recorded as a tensor")
    total_d, max_d, pooling = (_concrete(concrete, i) for i in (7, 8, 12))
    tables = _numel(d_offsets[0]) - 1
    if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0
               for v in (total_d, max_d)) or tables < 1:
        raise _Uncounted("its row widths (total_D, max_D) not recorded (Concrete Inputs)")
    assert isinstance(total_d, int) and isinstance(max_d, int)
    if total_d != tables * max_d:
        raise _Uncounted(f"its {tables} tables' rows differ in width (total_D {total_d}, the "
                         f"widest {max_d}) and how its indices divide among them is not "
                         "recorded")
    mode = _TBE_POOLING.get(pooling) if isinstance(pooling, int) else None
    if mode is None:
        raise _Uncounted(f"pooling mode {pooling!r} not a sum or a mean")
    bags = _numel(offsets[0]) - 1
    if bags < 0 or bags % tables:
        raise _Uncounted(f"{bags} bags do not divide among {tables} tables (a variable batch)")
    batch = bags // tables
    n = _numel(indices[0])
    per_weight = _tensor(dims, types, 13)
    weighted = per_weight is not None and _numel(per_weight[0]) > 0
    out_precision, out_size, told = _output_type(concrete, types, 17)
    per = 2 if weighted else 1
    outputs = batch * total_d
    flops = per * n * max_d + (outputs if mode == "mean" else 0)
    nbytes = (n * indices[2] + (bags + 1) * offsets[2] + n * max_d * weights[2]
              + (n * per_weight[2] if weighted and per_weight else 0) + outputs * out_size)
    return OpCount(float(flops), float(nbytes), weights[1], "vector",
                   f"{name} indices {_shape(indices[0])} offsets {_shape(offsets[0])}, "
                   f"{tables} tables of rows of {max_d} {_element(weights)} (total_D {total_d}, one "
                   f"width), {batch} bags each, pooled by "
                   f"{mode}: each row looked up is "
                   + ("multiplied by its weight and added" if weighted else "added")
                   + f" to its bag, {per}·{n}·{max_d}"
                   + (f" + {outputs} (the mean's division)" if mode == "mean" else "")
                   + " FLOPs; bytes indices + offsets + the rows read"
                   + (" + the per-index weights" if weighted else "")
                   + f" + the pooled output [{batch}, {total_d}] {out_precision}{told}")


def _table() -> dict[str, Any]:
    """Each operator name → the rule that counts it: (name, dims, types, concrete, kernel)."""
    rules: dict[str, Any] = {}

    def add(names, rule) -> None:
        rules.update(dict.fromkeys(names, rule))

    add(_GEMM, lambda n, d, t, c, k: _gemm(n, d, t))
    add((*_ATTENTION, *_ATTENTION_BACKWARD), lambda n, d, t, c, k: _attention(n, d, t, c))
    add(_CONV, lambda n, d, t, c, k: _conv(n, d, t, c))
    add(_NORMS, lambda n, d, t, c, k: _norm(n, d, t))
    add(_SOFTMAX, lambda n, d, t, c, k: _softmax(n, d, t))
    add(_SOFTMAX_BACKWARD, lambda n, d, t, c, k: _softmax_backward(n, d, t))
    add(_REDUCTIONS, lambda n, d, t, c, k: _reduction(n, d, t, c))
    add(_POW, lambda n, d, t, c, k: _pow(n, d, t, c))
    add(_CAT, lambda n, d, t, c, k: _cat(n, d, k))
    add(_ADAM, lambda n, d, t, c, k: _adam(n, d, t, c, k))
    add((*(f"aten::{b}" for b in _ELEMENTWISE), *(f"aten::{b}_" for b in _ELEMENTWISE)),
        lambda n, d, t, c, k: _elementwise(n, d, t))
    add((*_ELEMENTWISE_BACKWARD, "aten::gelu_backward"),
        lambda n, d, t, c, k: _elementwise_backward(n, d, t, c))
    add(_GATHER, lambda n, d, t, c, k: _gather(n, d, t, k))
    add(_INDEX_SELECT, lambda n, d, t, c, k: _index_select(n, d, t, c))
    add(_SCATTER_ADD, lambda n, d, t, c, k: _scatter_add(n, d, t))
    add(_CUMSUM, lambda n, d, t, c, k: _cumsum(n, d, t))
    add(_COMPARISONS, lambda n, d, t, c, k: _comparison(n, d, t))
    add(_WHERE, lambda n, d, t, c, k: _where(n, d, t))
    add(_MASKED_FILL, lambda n, d, t, c, k: _masked_fill(n, d, t))
    add(_LAYER_NORM_BACKWARD, lambda n, d, t, c, k: _layer_norm_backward(n, d, t, c))
    add(_ARANGE, lambda n, d, t, c, k: _arange(n, d, t, c))
    add(_EMBEDDING_BACKWARD, lambda n, d, t, c, k: _embedding_backward(n, d, t, c))
    add((*_MSE, *_MSE_BACKWARD), lambda n, d, t, c, k: _mse(n, d, t))
    add((*_NLL, *_NLL_BACKWARD), lambda n, d, t, c, k: _nll(n, d, t, c))
    add(_FOREACH, lambda n, d, t, c, k: _foreach(n, d, t, k))
    add(_FOREACH_NORM, lambda n, d, t, c, k: _foreach_norm(n, d, t, c, k))
    add(_NAN_TO_NUM, lambda n, d, t, c, k: _nan_to_num(n, d, t))
    add((*_LOGIT, *_LOGIT_BACKWARD), lambda n, d, t, c, k: _logit(n, d, t, c))
    add(_LOGICAL, lambda n, d, t, c, k: _logical(n, d, t))
    add(_SCATTER, lambda n, d, t, c, k: _scatter(n, d, t, c))
    add(_MAX_MIN, lambda n, d, t, c, k: _max_min(n, d, t, c))
    add(_VECTOR_NORM, lambda n, d, t, c, k: _vector_norm(n, d, t, c))
    add(_REPEAT_INTERLEAVE, lambda n, d, t, c, k: _repeat_interleave(n, d, t, c))
    add((*_FP8_ROWWISE, *_FP8_ROWWISE_BACK), lambda n, d, t, c, k: _fp8_rowwise(n, d, t, c))
    add((*_HFP8, *_HFP8_BACK), lambda n, d, t, c, k: _hfp8(n, d, t))
    add((*_PERMUTE_POOLED, *_PERMUTE_POOLED_BACKWARD),
        lambda n, d, t, c, k: _permute_pooled(n, d, t))
    add(_PERMUTE_SPARSE, lambda n, d, t, c, k: _permute_sparse(n, d, t, c))
    add(_ASYNC_CUMSUM, lambda n, d, t, c, k: _async_cumsum(n, d, t))
    add(_BOUNDS_CHECK, lambda n, d, t, c, k: _bounds_check(n, d, t))
    add((*_CONV_BACKWARD, *_CUDNN_CONV_BACKWARD), lambda n, d, t, c, k: _conv_backward(n, d, t, c))
    add(_BATCH_NORM, lambda n, d, t, c, k: _batch_norm(n, d, t, c))
    add((*_BATCH_NORM_BACKWARD, *_BATCH_NORM_BACKWARD_INPUT_FIRST),
        lambda n, d, t, c, k: _batch_norm_backward(n, d, t, c))
    add(_MAX_POOL, lambda n, d, t, c, k: _max_pool(n, d, t, c))
    add(_MAX_POOL_BACKWARD, lambda n, d, t, c, k: _max_pool_backward(n, d, t))
    add((*_ADAPTIVE_AVG_POOL, *_ADAPTIVE_AVG_POOL_BACKWARD),
        lambda n, d, t, c, k: _adaptive_avg_pool(n, d, t, c))
    add(_TBE_FORWARD, lambda n, d, t, c, k: _tbe_forward(n, d, t, c))
    return rules


_RULES = _table()
#: Every operator name :func:`count_operator` can count.
COUNTED_OPERATORS: frozenset[str] = frozenset(_RULES)
