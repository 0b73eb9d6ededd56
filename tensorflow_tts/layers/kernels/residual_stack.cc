// MelGAN's residual stack (layers/residual_stack.py, TFResidualStack) in one pass, for
// inference on the CPU in float32:
//
//   y = shortcut(x) + pointwise(lrelu(dilated(reflect_pad(lrelu(x)))))
//
// TensorFlow runs it as ~10 ops, each a pass over the whole signal: the activation, the
// reflect pad (slices, reverses, a concat), three convs. Here the signal is cut into tiles of
// rows; for each tile the activated, reflect-padded input, the dilated conv's output and the
// sum of both 1x1 convs stay in the core's cache, and the weights are read from it. The
// products are the same; only the order of the sums differs (float rounding, ~1e-6).
//
// The arithmetic is a register-blocked matrix product on the vectors of vectors.h.
#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tensorflow/core/util/work_sharder.h"
#include "reflect.h"
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

constexpr int kMaxRows = 8;   // rows of one register block
constexpr int kMaxVecs = 3;   // vectors (of kLanes columns) per row in one register block

inline Vec leaky_relu(Vec v, float alpha) { return v > Vec{} ? v : v * alpha; }  // TensorFlow's LeakyRelu

// One operand of a sum of matrix products: rows a[r * lda + i] (i < depth) times w[i * ldw + column].
struct Product {
  const float* a;
  int lda;
  const float* w;
  int ldw;
  int depth;
};

// out[row0 + r, col0 : col0 + kLanes*V] = act(bias + sum over products of a[row0 + r] @ w[:, col0:]),
// for R rows: R * V accumulators held in registers while the products' depth is walked.
template <int R, int V>
void block(const Product* products, int count, int row0, int col0, const float* bias, float* out, int ldo,
           bool activate, float alpha) {
  Vec acc[R][V];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) acc[r][v] = load(bias + col0 + kLanes * v);
  for (int p = 0; p < count; ++p) {
    const Product& product = products[p];
    const float* a = product.a + static_cast<int64_t>(row0) * product.lda;
    const float* w = product.w + col0;
    for (int i = 0; i < product.depth; ++i, w += product.ldw) {
      Vec wv[V];
      for (int v = 0; v < V; ++v) wv[v] = load(w + kLanes * v);
      for (int r = 0; r < R; ++r) {
        Vec ar = broadcast(a[r * product.lda + i]);
        for (int v = 0; v < V; ++v) acc[r][v] += ar * wv[v];
      }
    }
  }
  float* o = out + static_cast<int64_t>(row0) * ldo + col0;
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) store(o + r * ldo + kLanes * v, activate ? leaky_relu(acc[r][v], alpha) : acc[r][v]);
}

typedef void (*BlockFn)(const Product*, int, int, int, const float*, float*, int, bool, float);

template <int V, int... R>
constexpr std::array<BlockFn, sizeof...(R)> blocks_of(std::integer_sequence<int, R...>) {
  return {&block<R + 1, V>...};
}

// blocks[V - 1][R - 1]: the register block of R rows and V vectors.
const std::array<std::array<BlockFn, kMaxRows>, kMaxVecs> kBlocks = {
    blocks_of<1>(std::make_integer_sequence<int, kMaxRows>{}),
    blocks_of<2>(std::make_integer_sequence<int, kMaxRows>{}),
    blocks_of<3>(std::make_integer_sequence<int, kMaxRows>{}),
};

// out (rows x channels) = act(bias + sum of products); channels a multiple of kLanes.
void matmul(int rows, int channels, const Product* products, int count, const float* bias, float* out, int ldo,
            bool activate, float alpha) {
  for (int c0 = 0; c0 < channels; c0 += kLanes * kMaxVecs) {
    const int vecs = std::min(kMaxVecs, (channels - c0) / kLanes);
    for (int r0 = 0; r0 < rows; r0 += kMaxRows) {
      const int block_rows = std::min(kMaxRows, rows - r0);
      kBlocks[vecs - 1][block_rows - 1](products, count, r0, c0, bias, out, ldo, activate, alpha);
    }
  }
}

}  // namespace

REGISTER_OP("TtsResidualStack")
    .Input("x: float")                // (B, T, C)
    .Input("dilated_kernel: float")   // (K, C, C)
    .Input("dilated_bias: float")     // (C)
    .Input("pointwise_kernel: float") // (C, C)
    .Input("pointwise_bias: float")   // (C)
    .Input("shortcut_kernel: float")  // (C, C)
    .Input("shortcut_bias: float")    // (C)
    .Attr("dilation: int >= 1")
    .Attr("alpha: float")
    .Output("y: float")               // (B, T, C)
    .SetShapeFn([](tensorflow::shape_inference::InferenceContext* c) {
      c->set_output(0, c->input(0));
      return absl::OkStatus();
    });

class TtsResidualStackOp : public OpKernel {
 public:
  explicit TtsResidualStackOp(OpKernelConstruction* context) : OpKernel(context) {
    OP_REQUIRES_OK(context, context->GetAttr("dilation", &dilation_));
    OP_REQUIRES_OK(context, context->GetAttr("alpha", &alpha_));
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& x = context->input(0);
    const Tensor& dilated_kernel = context->input(1);
    OP_REQUIRES(context, x.dims() == 3, absl::InvalidArgumentError("x must be (B, T, C)"));
    const int batch = x.dim_size(0), steps = x.dim_size(1), channels = x.dim_size(2);
    const int taps = dilated_kernel.dims() == 3 ? dilated_kernel.dim_size(0) : 0;
    OP_REQUIRES(context, channels % kLanes == 0,
                absl::InvalidArgumentError("channels must be a multiple of 16"));
    OP_REQUIRES(context, taps % 2 == 1 && dilated_kernel.dim_size(1) == channels && dilated_kernel.dim_size(2) == channels,
                absl::InvalidArgumentError("dilated_kernel must be (K, C, C) with K odd"));
    for (int i : {2, 4, 6})
      OP_REQUIRES(context, context->input(i).NumElements() == channels, absl::InvalidArgumentError("biases must be (C)"));
    for (int i : {3, 5})
      OP_REQUIRES(context, context->input(i).NumElements() == channels * channels,
                  absl::InvalidArgumentError("1x1 kernels must be (C, C)"));
    const int pad = (taps - 1) / 2 * dilation_;
    OP_REQUIRES(context, steps > pad,
                absl::InvalidArgumentError("reflect padding needs more time steps than the padding"));
    Tensor* output = nullptr;
    OP_REQUIRES_OK(context, context->allocate_output(0, x.shape(), &output));
    if (x.NumElements() == 0) return;

    const float* xs = x.flat<float>().data();
    const float* wd = dilated_kernel.flat<float>().data();
    const float* bd = context->input(2).flat<float>().data();
    const float* wp = context->input(3).flat<float>().data();
    const float* ws = context->input(5).flat<float>().data();
    std::vector<float> out_bias(channels);
    for (int c = 0; c < channels; ++c)
      out_bias[c] = context->input(4).flat<float>()(c) + context->input(6).flat<float>()(c);
    float* ys = output->flat<float>().data();

    // Tiles of ~24 KB of rows: the tile, its padded input and the weights stay in L2.
    const int tile = std::clamp(6144 / channels / kMaxRows * kMaxRows, 16, 256);
    const int tiles = (steps + tile - 1) / tile;
    const int dilation = dilation_;
    const float alpha = alpha_;
    auto work = [&](int64_t begin, int64_t end) {
      std::vector<float> padded((tile + 2 * pad) * channels), hidden(tile * channels);
      std::vector<Product> taps_of(taps);
      for (int64_t job = begin; job < end; ++job) {
        const int b = job / tiles, t0 = (job % tiles) * tile, rows = std::min(tile, steps - t0);
        const float* xb = xs + static_cast<int64_t>(b) * steps * channels;
        for (int r = 0; r < rows + 2 * pad; ++r) {
          const float* in = xb + tts_kernels::reflected(t0 + r, pad, steps) * channels;
          float* row = padded.data() + static_cast<int64_t>(r) * channels;
          for (int c = 0; c < channels; c += kLanes) store(row + c, leaky_relu(load(in + c), alpha));
        }
        for (int k = 0; k < taps; ++k)
          taps_of[k] = {padded.data() + static_cast<int64_t>(k) * dilation * channels, channels,
                        wd + static_cast<int64_t>(k) * channels * channels, channels, channels};
        matmul(rows, channels, taps_of.data(), taps, bd, hidden.data(), channels, true, alpha);
        const Product sum[2] = {{hidden.data(), channels, wp, channels, channels},
                                {xb + static_cast<int64_t>(t0) * channels, channels, ws, channels, channels}};
        matmul(rows, channels, sum, 2, out_bias.data(), ys + (static_cast<int64_t>(b) * steps + t0) * channels,
               channels, false, alpha);
      }
    };
    auto* threads = context->device()->tensorflow_cpu_worker_threads();
    const int64_t cost = static_cast<int64_t>(tile) * channels * channels * (taps + 2) * 2;
    tensorflow::Shard(threads->num_threads, threads->workers, static_cast<int64_t>(batch) * tiles, cost, work);
  }

 private:
  int dilation_;
  float alpha_;
};

REGISTER_KERNEL_BUILDER(Name("TtsResidualStack").Device(tensorflow::DEVICE_CPU), TtsResidualStackOp);
