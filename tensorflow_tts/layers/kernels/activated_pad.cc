// LeakyReLU, then reflect padding along time, and the gradient of both, each as one pass over the
// signal: the vocoders' residual blocks and last conv pad an activated signal
// (layers/residual_stack.py, pad_activated), in float32 training on the CPU.
//
// TensorFlow runs the forward as a LeakyRelu and a concat with the reflected edges: the
// activation is written out, then read again and copied. The gradient is a MirrorPadGrad
// (the padded gradient's middle copied, the edges added back reversed) and a LeakyReluGrad:
// again two passes. Here each direction reads its inputs once and writes its output once.
//
// The values are TensorFlow's bit for bit: the same select for the activation, and in the
// gradient the same sums in the same order (middle, then the left edge, then the right), then
// LeakyReluGrad's select.
#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tensorflow/core/util/work_sharder.h"
#include "reflect.h"

namespace {

using tensorflow::OpKernel;
using tensorflow::OpKernelConstruction;
using tensorflow::OpKernelContext;
using tensorflow::Tensor;
using tensorflow::shape_inference::DimensionHandle;
using tensorflow::shape_inference::InferenceContext;
using tts_kernels::reflected;

// TensorFlow's LeakyRelu of `count` values (a row, or a run of rows). The arguments are values
// and restrict pointers, so the compiler knows no store changes alpha or the input, and
// vectorises the select (an alpha read through a lambda's reference capture kept the loop
// scalar, with a branch per element: 6x the time).
inline void leaky_relu(const float* __restrict__ in, float* __restrict__ out, int64_t count, float alpha) {
  for (int64_t i = 0; i < count; ++i) out[i] = in[i] > 0.0f ? in[i] : in[i] * alpha;
}

// TensorFlow's LeakyReluGrad of `count` values (a row, or a run of rows), of the gradient g
// plus the reflected edges' left and right where not null (added in MirrorPadGrad's order); x
// is the activation's input.
inline void leaky_relu_gradient(const float* __restrict__ g, const float* __restrict__ left,
                                const float* __restrict__ right, const float* __restrict__ x,
                                float* __restrict__ out, int64_t count, float alpha) {
  if (left == nullptr && right == nullptr) {
    for (int64_t i = 0; i < count; ++i) out[i] = x[i] > 0.0f ? g[i] : g[i] * alpha;
    return;
  }
  for (int64_t i = 0; i < count; ++i) {
    float sum = g[i];
    if (left != nullptr) sum += left[i];
    if (right != nullptr) sum += right[i];
    out[i] = x[i] > 0.0f ? sum : sum * alpha;
  }
}

// work(b, t, row, rows) over the rows of a (B * steps, C) signal (row = b * steps + t), shared out
// on TensorFlow's CPU threads in runs: rows t .. t + rows of item b, at most run_at(t) of them.
template <typename RunAt, typename Work>
void for_runs(OpKernelContext* context, int64_t batch, int64_t steps, int64_t cost_per_row, RunAt run_at, Work work) {
  auto* threads = context->device()->tensorflow_cpu_worker_threads();
  tensorflow::Shard(threads->num_threads, threads->workers, batch * steps, cost_per_row,
                    [&](int64_t begin, int64_t end) {
                      for (int64_t row = begin, rows; row < end; row += rows) {
                        const int64_t b = row / steps, t = row % steps;
                        rows = std::min(end - row, run_at(t));
                        work(b, t, row, rows);
                      }
                    });
}

// Reads the op's attributes and checks x's shape: (B, T, C) with T > size.
class ActivatedPadOp : public OpKernel {
 public:
  explicit ActivatedPadOp(OpKernelConstruction* context) : OpKernel(context) {
    OP_REQUIRES_OK(context, context->GetAttr("size", &size_));
    OP_REQUIRES_OK(context, context->GetAttr("alpha", &alpha_));
  }

 protected:
  absl::Status check_signal(const Tensor& x) const {
    if (x.dims() != 3) return absl::InvalidArgumentError("x must be (B, T, C)");
    if (x.dim_size(1) <= size_)
      return absl::InvalidArgumentError(absl::StrCat("reflect padding by ", size_, " needs more time steps than the ",
                                                     "padding; x has ", x.dim_size(1)));
    return absl::OkStatus();
  }

  int64_t size_;
  float alpha_;
};

}  // namespace

REGISTER_OP("TtsLeakyReflectPad")
    .Input("x: float")   // (B, T, C)
    .Attr("size: int >= 1")
    .Attr("alpha: float")
    .Output("y: float")  // (B, T + 2 * size, C)
    .SetShapeFn([](InferenceContext* c) {
      int64_t size;
      TF_RETURN_IF_ERROR(c->GetAttr("size", &size));
      DimensionHandle steps;
      TF_RETURN_IF_ERROR(c->Add(c->Dim(c->input(0), 1), 2 * size, &steps));
      c->set_output(0, c->MakeShape({c->Dim(c->input(0), 0), steps, c->Dim(c->input(0), 2)}));
      return absl::OkStatus();
    });

REGISTER_OP("TtsLeakyReflectPadGrad")
    .Input("dy: float")  // (B, T + 2 * size, C)
    .Input("x: float")   // (B, T, C): the forward op's input
    .Attr("size: int >= 1")
    .Attr("alpha: float")
    .Output("dx: float")  // (B, T, C)
    .SetShapeFn([](InferenceContext* c) {
      c->set_output(0, c->input(1));
      return absl::OkStatus();
    });

class TtsLeakyReflectPadOp : public ActivatedPadOp {
 public:
  using ActivatedPadOp::ActivatedPadOp;

  void Compute(OpKernelContext* context) override {
    const Tensor& x = context->input(0);
    OP_REQUIRES_OK(context, check_signal(x));
    const int64_t batch = x.dim_size(0), steps = x.dim_size(1), channels = x.dim_size(2);
    const int64_t padded = steps + 2 * size_;
    Tensor* output = nullptr;
    OP_REQUIRES_OK(context, context->allocate_output(0, {batch, padded, channels}, &output));
    if (output->NumElements() == 0) return;
    const float* xs = x.flat<float>().data();
    float* ys = output->flat<float>().data();
    const int64_t size = size_;
    const float alpha = alpha_;
    // The middle's rows copy consecutive steps: one run of them at a time, an edge's row alone.
    auto run_at = [&](int64_t t) { return size <= t && t < size + steps ? size + steps - t : 1; };
    for_runs(context, batch, padded, 4 * channels, run_at, [&](int64_t b, int64_t t, int64_t row, int64_t rows) {
      leaky_relu(xs + (b * steps + reflected(t, size, steps)) * channels, ys + row * channels, rows * channels, alpha);
    });
  }
};

class TtsLeakyReflectPadGradOp : public ActivatedPadOp {
 public:
  using ActivatedPadOp::ActivatedPadOp;

  void Compute(OpKernelContext* context) override {
    const Tensor& dy = context->input(0);
    const Tensor& x = context->input(1);
    OP_REQUIRES_OK(context, check_signal(x));
    const int64_t batch = x.dim_size(0), steps = x.dim_size(1), channels = x.dim_size(2);
    const int64_t padded = steps + 2 * size_;
    OP_REQUIRES(context, dy.dims() == 3 && dy.dim_size(0) == batch && dy.dim_size(1) == padded &&
                             dy.dim_size(2) == channels,
                absl::InvalidArgumentError("dy must be (B, T + 2 * size, C) for x (B, T, C)"));
    Tensor* output = nullptr;
    OP_REQUIRES_OK(context, context->allocate_output(0, x.shape(), &output));
    if (output->NumElements() == 0) return;
    const float* dys = dy.flat<float>().data();
    const float* xs = x.flat<float>().data();
    float* dxs = output->flat<float>().data();
    const int64_t size = size_;
    const float alpha = alpha_;
    // The padded steps that reflect step s: p - s on the left (1 <= s <= p), on the right
    // 2 (T - 1) - s + p (T - 1 - p <= s <= T - 2). Steps between the two edges' reach are
    // reflected nowhere: one run of them at a time, the others one row each.
    auto run_at = [&](int64_t s) { return size < s && s < steps - 1 - size ? steps - 1 - size - s : 1; };
    for_runs(context, batch, steps, 5 * channels, run_at, [&](int64_t b, int64_t s, int64_t row, int64_t rows) {
      const float* item = dys + b * padded * channels;
      const float* left = 1 <= s && s <= size ? item + (size - s) * channels : nullptr;
      const float* right = steps - 1 - size <= s && s <= steps - 2 ? item + (2 * (steps - 1) - s + size) * channels
                                                                   : nullptr;
      leaky_relu_gradient(item + (s + size) * channels, left, right, xs + row * channels, dxs + row * channels,
                          rows * channels, alpha);
    });
  }
};

REGISTER_KERNEL_BUILDER(Name("TtsLeakyReflectPad").Device(tensorflow::DEVICE_CPU), TtsLeakyReflectPadOp);
REGISTER_KERNEL_BUILDER(Name("TtsLeakyReflectPadGrad").Device(tensorflow::DEVICE_CPU), TtsLeakyReflectPadGradOp);
