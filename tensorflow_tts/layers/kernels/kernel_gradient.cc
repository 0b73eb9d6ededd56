// The kernel gradient of a stride-1 1-D convolution (layers/conv1d.py, kernel_gradient) with
// few channels, for training on the CPU in float32:
//
//   dW[k] = sum over b, t of x_padded[b, t + k * dilation]^T dy[b, t]      (K, C_in, C_out)
//
// TensorFlow computes each tap as a (C_in x N) x (N x C_out) matmul. With 32-192 channels over
// thousands of rows (MB-MelGAN's generator) the product is long and thin, and oneDNN spreads it
// over two threads poorly. Here the rows are cut into chunks; each thread sums the products of its
// chunks, all taps of a chunk while it is in cache, into its own copy of dW, and the copies are
// added in a fixed order (the same result on every run). The sums are the matmuls' in another
// order (float rounding).
#include <algorithm>
#include <vector>

#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tensorflow/core/util/work_sharder.h"
#include "vectors.h"

namespace {

using tensorflow::OpKernel;
using tensorflow::OpKernelConstruction;
using tensorflow::OpKernelContext;
using tensorflow::Tensor;

using tts_kernels::broadcast;
using tts_kernels::kLanes;
using tts_kernels::load;
using tts_kernels::store;
using tts_kernels::Vec;

constexpr int kChunk = 128;  // rows per unit of work: 64-256 ran alike, 16 and 2048 slower (48 channels)
constexpr int kRows = 8;     // rows of out in one register block
constexpr int kMaxVecs = 3;  // vectors of out's columns in one register block

// out[i, j0 + kLanes * v] += sum over r < steps of a[r * lda + i] * d[r * ldd + j0 + kLanes * v] for
// i < R, v < V: R * V accumulators held in registers while the rows are walked.
template <int R, int V>
void block(const float* a, int lda, const float* d, int ldd, int steps, int j0, float* out, int ldo) {
  Vec acc[R][V];
  for (int i = 0; i < R; ++i)
    for (int v = 0; v < V; ++v) acc[i][v] = load(out + i * ldo + j0 + kLanes * v);
  d += j0;
  for (int r = 0; r < steps; ++r, a += lda, d += ldd) {
    Vec dv[V];
    for (int v = 0; v < V; ++v) dv[v] = load(d + kLanes * v);
    for (int i = 0; i < R; ++i) {
      const Vec ai = broadcast(a[i]);
      for (int v = 0; v < V; ++v) acc[i][v] += ai * dv[v];
    }
  }
  for (int i = 0; i < R; ++i)
    for (int v = 0; v < V; ++v) store(out + i * ldo + j0 + kLanes * v, acc[i][v]);
}

template <int R>
void block_of(int vecs, const float* a, int lda, const float* d, int ldd, int steps, int j0, float* out, int ldo) {
  if (vecs == 3) return block<R, 3>(a, lda, d, ldd, steps, j0, out, ldo);
  if (vecs == 2) return block<R, 2>(a, lda, d, ldd, steps, j0, out, ldo);
  block<R, 1>(a, lda, d, ldd, steps, j0, out, ldo);
}

// out (m x n) += a^T d over `steps` rows: a (steps x m) and d (steps x n), rows lda and ldd floats
// apart; n a multiple of kLanes.
void add_product(const float* a, int lda, int m, const float* d, int ldd, int n, int steps, float* out) {
  for (int j0 = 0; j0 < n; j0 += kLanes * kMaxVecs) {
    const int vecs = std::min(kMaxVecs, (n - j0) / kLanes);
    int i0 = 0;
    for (; i0 + kRows <= m; i0 += kRows)
      block_of<kRows>(vecs, a + i0, lda, d, ldd, steps, j0, out + static_cast<int64_t>(i0) * n, n);
    for (; i0 < m; ++i0) block_of<1>(vecs, a + i0, lda, d, ldd, steps, j0, out + static_cast<int64_t>(i0) * n, n);
  }
}

}  // namespace

REGISTER_OP("TtsConvKernelGradient")
    .Input("x_padded: float")  // (B, T + dilation * (taps - 1), C_in)
    .Input("dy: float")        // (B, T, C_out)
    .Attr("taps: int >= 1")
    .Attr("dilation: int >= 1")
    .Output("kernel_gradient: float")  // (taps, C_in, C_out)
    .SetShapeFn([](tensorflow::shape_inference::InferenceContext* c) {
      int taps;
      TF_RETURN_IF_ERROR(c->GetAttr("taps", &taps));
      c->set_output(0, c->MakeShape({taps, c->Dim(c->input(0), 2), c->Dim(c->input(1), 2)}));
      return absl::OkStatus();
    });

class TtsConvKernelGradientOp : public OpKernel {
 public:
  explicit TtsConvKernelGradientOp(OpKernelConstruction* context) : OpKernel(context) {
    OP_REQUIRES_OK(context, context->GetAttr("taps", &taps_));
    OP_REQUIRES_OK(context, context->GetAttr("dilation", &dilation_));
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& x = context->input(0);
    const Tensor& dy = context->input(1);
    OP_REQUIRES(context, x.dims() == 3 && dy.dims() == 3 && x.dim_size(0) == dy.dim_size(0) &&
                             x.dim_size(1) == dy.dim_size(1) + static_cast<int64_t>(dilation_) * (taps_ - 1),
                absl::InvalidArgumentError("x_padded must be (B, T + dilation * (taps - 1), C_in) for dy (B, T, C_out)"));
    const int batch = dy.dim_size(0), steps = dy.dim_size(1), out_channels = dy.dim_size(2);
    const int padded_steps = x.dim_size(1), in_channels = x.dim_size(2);
    // The vectors run along C_out; where C_out is not a multiple of kLanes and C_in is, along C_in:
    // dW[k]^T = sum of dy^T x_padded[shifted], transposed at the end.
    const bool transposed = out_channels % kLanes != 0;
    OP_REQUIRES(context, !transposed || in_channels % kLanes == 0,
                absl::InvalidArgumentError("C_in or C_out must be a multiple of 16"));
    Tensor* output = nullptr;
    OP_REQUIRES_OK(context, context->allocate_output(0, {taps_, in_channels, out_channels}, &output));
    const int64_t tap_size = static_cast<int64_t>(in_channels) * out_channels, size = taps_ * tap_size;
    if (size == 0) return;
    float* out = output->flat<float>().data();
    if (batch == 0 || steps == 0) {
      std::fill(out, out + size, 0.0f);
      return;
    }

    const int chunks = (steps + kChunk - 1) / kChunk;
    const int64_t units = static_cast<int64_t>(batch) * chunks;
    auto* threads = context->device()->tensorflow_cpu_worker_threads();
    const int parts = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads->num_threads, units)));
    // Each part sums into its own copy of dW; where dW is not summed transposed, the first part's
    // copy is the output itself (no copy pass at the end).
    const int own_copies = transposed ? parts : parts - 1;
    std::vector<float> copies(static_cast<size_t>(own_copies) * size, 0.0f);
    if (!transposed) std::fill(out, out + size, 0.0f);
    auto copy_of = [&](int64_t part) {
      return transposed ? copies.data() + part * size : part == 0 ? out : copies.data() + (part - 1) * size;
    };
    const float* xs = x.flat<float>().data();
    const float* dys = dy.flat<float>().data();
    auto work = [&](int64_t begin, int64_t end) {
      for (int64_t part = begin; part < end; ++part) {
        float* sum = copy_of(part);
        for (int64_t unit = units * part / parts; unit < units * (part + 1) / parts; ++unit) {
          const int b = unit / chunks, t0 = (unit % chunks) * kChunk, rows = std::min(kChunk, steps - t0);
          const float* d = dys + (static_cast<int64_t>(b) * steps + t0) * out_channels;
          for (int k = 0; k < taps_; ++k) {
            const float* a = xs + (static_cast<int64_t>(b) * padded_steps + t0 + k * dilation_) * in_channels;
            if (transposed)
              add_product(d, out_channels, out_channels, a, in_channels, in_channels, rows, sum + k * tap_size);
            else
              add_product(a, in_channels, in_channels, d, out_channels, out_channels, rows, sum + k * tap_size);
          }
        }
      }
    };
    const int64_t flops_per_part = 2 * units * kChunk * tap_size * taps_ / parts;
    tensorflow::Shard(parts, threads->workers, parts, flops_per_part, work);
    // The copies' sum in a fixed order (the first, then each next), into the first: contiguous adds.
    float* total = copy_of(0);
    for (int part = 1; part < parts; ++part) {
      const float* copy = copy_of(part);
      for (int64_t i = 0; i < size; ++i) total[i] += copy[i];
    }
    if (!transposed) return;
    for (int64_t k = 0; k < taps_; ++k)  // element (k, i, j) of dW was summed at (k, j, i)
      for (int64_t i = 0; i < in_channels; ++i)
        for (int64_t j = 0; j < out_channels; ++j)
          out[k * tap_size + i * out_channels + j] = total[k * tap_size + j * in_channels + i];
  }

 private:
  int taps_, dilation_;
};

REGISTER_KERNEL_BUILDER(Name("TtsConvKernelGradient").Device(tensorflow::DEVICE_CPU), TtsConvKernelGradientOp);
