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
// The arithmetic is a register-blocked matrix product written with GCC's vector extensions,
// so the compiler picks the widest vectors of the CPU it is built on (-march=native).
#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tensorflow/core/util/work_sharder.h"

namespace {

using tensorflow::OpKernel;
using tensorflow::OpKernelConstruction;
using tensorflow::OpKernelContext;
using tensorflow::Tensor;

constexpr int kLanes = 16;    // floats per vector
constexpr int kMaxRows = 8;   // rows of one register block
constexpr int kMaxVecs = 3;   // vectors (of kLanes columns) per row in one register block

typedef float Vec __attribute__((vector_size(kLanes * sizeof(float))));
typedef float UnalignedVec __attribute__((vector_size(kLanes * sizeof(float)), aligned(sizeof(float))));

inline Vec load(const float* p) { return *reinterpret_cast<const UnalignedVec*>(p); }
inline void store(float* p, Vec v) { *reinterpret_cast<UnalignedVec*>(p) = v; }
// Every lane s (not Vec{} + s: without -ffast-math that is a scalar add before each broadcast).
template <size_t... Lane>
inline Vec splat(float s, std::index_sequence<Lane...>) { return Vec{((void)Lane, s)...}; }
inline Vec broadcast(float s) { return splat(s, std::make_index_sequence<kLanes>{}); }
inline Vec leaky_relu(Vec v, float alpha) { return v > Vec{} ? v : v * alpha; }  // TensorFlow's LeakyRelu

// One operand of a sum of matrix products: rows a[r * lda + i * inc] (i < depth) times
// w[i * ldw + column]. inc = 1: a's rows are rows in memory; lda = 1, inc = C: a is the
// transpose of a (depth x C) signal, as the weight gradients read it.
struct Product {
  const float* a;
  int lda;
  const float* w;
  int ldw;
  int depth;
  int inc = 1;
};

// out[row0 + r, col0 : col0 + kLanes*V] = act(bias + sum over products of a[row0 + r] @ w[:, col0:]),
// for R rows: R * V accumulators held in registers while the products' depth is walked. With no
// bias (nullptr) the products are added to what out holds.
template <int R, int V>
void block(const Product* products, int count, int row0, int col0, const float* bias, float* out, int ldo,
           bool activate, float alpha) {
  Vec acc[R][V];
  float* o = out + static_cast<int64_t>(row0) * ldo + col0;
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) acc[r][v] = bias ? load(bias + col0 + kLanes * v) : load(o + r * ldo + kLanes * v);
  for (int p = 0; p < count; ++p) {
    const Product& product = products[p];
    const float* a = product.a + static_cast<int64_t>(row0) * product.lda;
    const float* w = product.w + col0;
    for (int i = 0; i < product.depth; ++i, w += product.ldw, a += product.inc) {
      Vec wv[V];
      for (int v = 0; v < V; ++v) wv[v] = load(w + kLanes * v);
      for (int r = 0; r < R; ++r) {
        Vec ar = broadcast(a[r * product.lda]);
        for (int v = 0; v < V; ++v) acc[r][v] += ar * wv[v];
      }
    }
  }
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

// out (rows x channels) = act(bias + sum of products), or out += sum of products with no bias;
// channels a multiple of kLanes.
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

// Floats per tile of rows. Forward: ~24 KB of the signal, so a tile's buffers and the weights
// stay in L2. Backward: the weight gradients' products run over a tile's rows, each time
// reading and writing their C x C sums, so longer tiles pay off there.
constexpr int kForwardTile = 6144;
constexpr int kBackwardTile = 49152;

// The block's sizes, checked once per call.
struct Shapes {
  int batch, steps, channels, taps, dilation, pad;
  float alpha;
  int tile, tiles;  // rows per tile (at least 16, a multiple of 8 up to 4096), tiles per item

  int64_t row(int b, int t) const { return (static_cast<int64_t>(b) * steps + t) * channels; }
};

absl::Status shapes_of(const Tensor& x, const Tensor& dilated_kernel, int dilation, float alpha, int tile_floats,
                       Shapes* s) {
  if (x.dims() != 3) return absl::InvalidArgumentError("x must be (B, T, C)");
  s->batch = x.dim_size(0), s->steps = x.dim_size(1), s->channels = x.dim_size(2);
  s->taps = dilated_kernel.dims() == 3 ? dilated_kernel.dim_size(0) : 0;
  if (s->channels % kLanes != 0) return absl::InvalidArgumentError("channels must be a multiple of 16");
  if (s->taps % 2 != 1 || dilated_kernel.dim_size(1) != s->channels || dilated_kernel.dim_size(2) != s->channels)
    return absl::InvalidArgumentError("dilated_kernel must be (K, C, C) with K odd");
  s->dilation = dilation, s->alpha = alpha, s->pad = (s->taps - 1) / 2 * dilation;
  if (s->steps <= s->pad) return absl::InvalidArgumentError("reflect padding needs more time steps than the padding");
  s->tile = std::clamp(tile_floats / s->channels / kMaxRows * kMaxRows, 16, 4096);
  s->tiles = (s->steps + s->tile - 1) / s->tile;
  return absl::OkStatus();
}

absl::Status check_sizes(OpKernelContext* context, std::initializer_list<int> inputs, int64_t elements, const char* what) {
  for (int i : inputs)
    if (context->input(i).NumElements() != elements) return absl::InvalidArgumentError(what);
  return absl::OkStatus();
}

// rows r < count of lrelu(reflect_pad(x)) from padded row `first`: x rows `first - pad + r`
// reflected into [0, steps) (the edge not repeated).
void activated_padded(const float* xb, const Shapes& s, int first, int count, float* out) {
  for (int r = 0; r < count; ++r) {
    int source = first - s.pad + r;
    if (source < 0) source = -source;
    if (source >= s.steps) source = 2 * (s.steps - 1) - source;
    const float* in = xb + static_cast<int64_t>(source) * s.channels;
    float* row = out + static_cast<int64_t>(r) * s.channels;
    for (int c = 0; c < s.channels; c += kLanes) store(row + c, leaky_relu(load(in + c), s.alpha));
  }
}

// out (columns x rows) = the transpose of `rows` rows of `columns` floats.
void transpose(const float* in, int rows, int columns, float* out) {
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < columns; ++c) out[static_cast<int64_t>(c) * rows + r] = in[static_cast<int64_t>(r) * columns + c];
}

// `count` (K, C, C) matrices, each transposed.
std::vector<float> transposed(const float* w, int count, int channels) {
  std::vector<float> out(static_cast<int64_t>(count) * channels * channels);
  for (int k = 0; k < count; ++k)
    transpose(w + static_cast<int64_t>(k) * channels * channels, channels, channels,
              out.data() + static_cast<int64_t>(k) * channels * channels);
  return out;
}

// Runs work(part) for parts 0..parts-1 on TensorFlow's CPU threads, one task each.
template <typename Work>
void for_each_part(OpKernelContext* context, int parts, Work work) {
  auto* threads = context->device()->tensorflow_cpu_worker_threads();
  tensorflow::Shard(threads->num_threads, threads->workers, parts, int64_t{1} << 40, [&](int64_t begin, int64_t end) {
    for (int64_t part = begin; part < end; ++part) work(static_cast<int>(part));
  });
}

}  // namespace

// ---- forward: y = shortcut(x) + pointwise(lrelu(dilated(reflect_pad(lrelu(x))))) ----

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

// The same, for training: also returns the hidden signal lrelu(dilated(...)), which the
// gradient (TtsResidualStackGrad) reads instead of computing it again.
REGISTER_OP("TtsResidualStackTrain")
    .Input("x: float")
    .Input("dilated_kernel: float")
    .Input("dilated_bias: float")
    .Input("pointwise_kernel: float")
    .Input("pointwise_bias: float")
    .Input("shortcut_kernel: float")
    .Input("shortcut_bias: float")
    .Attr("dilation: int >= 1")
    .Attr("alpha: float")
    .Output("y: float")               // (B, T, C)
    .Output("hidden: float")          // (B, T, C)
    .SetShapeFn([](tensorflow::shape_inference::InferenceContext* c) {
      c->set_output(0, c->input(0));
      c->set_output(1, c->input(0));
      return absl::OkStatus();
    });

template <bool kKeepHidden>
class TtsResidualStackOp : public OpKernel {
 public:
  explicit TtsResidualStackOp(OpKernelConstruction* context) : OpKernel(context) {
    OP_REQUIRES_OK(context, context->GetAttr("dilation", &dilation_));
    OP_REQUIRES_OK(context, context->GetAttr("alpha", &alpha_));
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& x = context->input(0);
    Shapes s;
    OP_REQUIRES_OK(context, shapes_of(x, context->input(1), dilation_, alpha_, kForwardTile, &s));
    OP_REQUIRES_OK(context, check_sizes(context, {2, 4, 6}, s.channels, "biases must be (C)"));
    OP_REQUIRES_OK(context, check_sizes(context, {3, 5}, int64_t{s.channels} * s.channels, "1x1 kernels must be (C, C)"));
    Tensor* output = nullptr;
    OP_REQUIRES_OK(context, context->allocate_output(0, x.shape(), &output));
    Tensor* hidden_output = nullptr;
    if (kKeepHidden) OP_REQUIRES_OK(context, context->allocate_output(1, x.shape(), &hidden_output));
    if (x.NumElements() == 0) return;

    const int channels = s.channels, tile = s.tile, tiles = s.tiles;
    const float* xs = x.flat<float>().data();
    const float* wd = context->input(1).flat<float>().data();
    const float* bd = context->input(2).flat<float>().data();
    const float* wp = context->input(3).flat<float>().data();
    const float* ws = context->input(5).flat<float>().data();
    std::vector<float> out_bias(channels);
    for (int c = 0; c < channels; ++c)
      out_bias[c] = context->input(4).flat<float>()(c) + context->input(6).flat<float>()(c);
    float* ys = output->flat<float>().data();
    float* kept = kKeepHidden ? hidden_output->flat<float>().data() : nullptr;

    auto work = [&](int64_t begin, int64_t end) {
      std::vector<float> padded((tile + 2 * s.pad) * channels), scratch(kKeepHidden ? 0 : tile * channels);
      std::vector<Product> taps_of(s.taps);
      for (int64_t job = begin; job < end; ++job) {
        const int b = job / tiles, t0 = (job % tiles) * tile, rows = std::min(tile, s.steps - t0);
        const float* xb = xs + s.row(b, 0);
        activated_padded(xb, s, t0, rows + 2 * s.pad, padded.data());
        for (int k = 0; k < s.taps; ++k)
          taps_of[k] = {padded.data() + static_cast<int64_t>(k) * s.dilation * channels, channels,
                        wd + static_cast<int64_t>(k) * channels * channels, channels, channels};
        float* hidden = kKeepHidden ? kept + s.row(b, t0) : scratch.data();
        matmul(rows, channels, taps_of.data(), s.taps, bd, hidden, channels, true, s.alpha);
        const Product sum[2] = {{hidden, channels, wp, channels, channels},
                                {xb + static_cast<int64_t>(t0) * channels, channels, ws, channels, channels}};
        matmul(rows, channels, sum, 2, out_bias.data(), ys + s.row(b, t0), channels, false, s.alpha);
      }
    };
    auto* threads = context->device()->tensorflow_cpu_worker_threads();
    const int64_t cost = static_cast<int64_t>(tile) * channels * channels * (s.taps + 2) * 2;
    tensorflow::Shard(threads->num_threads, threads->workers, static_cast<int64_t>(s.batch) * tiles, cost, work);
  }

 private:
  int dilation_;
  float alpha_;
};

REGISTER_KERNEL_BUILDER(Name("TtsResidualStack").Device(tensorflow::DEVICE_CPU), TtsResidualStackOp<false>);
REGISTER_KERNEL_BUILDER(Name("TtsResidualStackTrain").Device(tensorflow::DEVICE_CPU), TtsResidualStackOp<true>);

// ---- gradient of TtsResidualStackTrain ----
//
// With a = lrelu(x), p = reflect_pad(a), h = dilated(p), g = lrelu(h) (`hidden`) and
// y = g Wp + bp + x Ws + bs:
//   dWp = g' dy, dWs = x' dy, dbp = dbs = sum dy;   dh = (dy Wp') * lrelu'(h);   dbd = sum dh;
//   dWd[k] = p[k d : k d + T]' dh;   dp[s] = sum_k dh[s - k d] Wd[k]';   dx = reflect_pad'(dp) * lrelu'(x) + dy Ws'
// lrelu'(h) is read from g's sign (the same for alpha >= 0). Two passes over tiles: the first
// writes dh (the second needs it on a halo around each tile) and the 1x1 convs' weight
// gradients; the second the dilated conv's weight gradient and dx. The weight gradients are
// summed per part of the rows (one per thread) and the parts added at the end; the few rows of
// dx the reflected edges feed are added last.

REGISTER_OP("TtsResidualStackGrad")
    .Input("dy: float")               // (B, T, C)
    .Input("x: float")                // (B, T, C)
    .Input("hidden: float")           // (B, T, C): TtsResidualStackTrain's second output
    .Input("dilated_kernel: float")   // (K, C, C)
    .Input("pointwise_kernel: float") // (C, C)
    .Input("shortcut_kernel: float")  // (C, C)
    .Attr("dilation: int >= 1")
    .Attr("alpha: float")
    .Output("dx: float")
    .Output("d_dilated_kernel: float")
    .Output("d_dilated_bias: float")
    .Output("d_pointwise_kernel: float")
    .Output("d_pointwise_bias: float")
    .Output("d_shortcut_kernel: float")
    .Output("d_shortcut_bias: float")
    .SetShapeFn([](tensorflow::shape_inference::InferenceContext* c) {
      c->set_output(0, c->input(1));
      c->set_output(1, c->input(3));
      c->set_output(3, c->input(4));
      c->set_output(5, c->input(5));
      tensorflow::shape_inference::DimensionHandle channels = c->Dim(c->input(1), 2);
      for (int i : {2, 4, 6}) c->set_output(i, c->Vector(channels));
      return absl::OkStatus();
    });

class TtsResidualStackGradOp : public OpKernel {
 public:
  explicit TtsResidualStackGradOp(OpKernelConstruction* context) : OpKernel(context) {
    OP_REQUIRES_OK(context, context->GetAttr("dilation", &dilation_));
    OP_REQUIRES_OK(context, context->GetAttr("alpha", &alpha_));
    OP_REQUIRES(context, alpha_ >= 0, absl::InvalidArgumentError("the gradient needs alpha >= 0"));
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& x = context->input(1);
    Shapes s;
    OP_REQUIRES_OK(context, shapes_of(x, context->input(3), dilation_, alpha_, kBackwardTile, &s));
    OP_REQUIRES(context, context->input(0).shape() == x.shape() && context->input(2).shape() == x.shape(),
                absl::InvalidArgumentError("dy and hidden must have x's shape"));
    const int channels = s.channels, taps = s.taps;
    const int64_t square = int64_t{channels} * channels;
    OP_REQUIRES_OK(context, check_sizes(context, {4, 5}, square, "1x1 kernels must be (C, C)"));
    Tensor* outputs[7];
    OP_REQUIRES_OK(context, context->allocate_output(0, x.shape(), &outputs[0]));
    for (int i = 1; i < 7; ++i) {
      const tensorflow::TensorShape shape = i % 2 ? context->input(2 + (i + 1) / 2).shape()
                                                  : tensorflow::TensorShape({channels});
      OP_REQUIRES_OK(context, context->allocate_output(i, shape, &outputs[i]));
    }
    // Weight gradients per part: dWd (K C^2), dWp, dWs (C^2 each), dbd, dbp (C each).
    const int64_t jobs = static_cast<int64_t>(s.batch) * s.tiles;
    const int parts = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(
        context->device()->tensorflow_cpu_worker_threads()->num_threads, jobs)));
    const int64_t per_part = (taps + 2) * square + 2 * channels;
    std::vector<float> sums(parts * per_part, 0.0f);
    Tensor dh_tensor;
    OP_REQUIRES_OK(context, context->allocate_temp(tensorflow::DT_FLOAT, x.shape(), &dh_tensor));
    if (x.NumElements() > 0) {
      const float* dy = context->input(0).flat<float>().data();
      const float* xs = x.flat<float>().data();
      const float* hidden = context->input(2).flat<float>().data();
      const std::vector<float> wd_t = transposed(context->input(3).flat<float>().data(), taps, channels);
      const std::vector<float> wp_t = transposed(context->input(4).flat<float>().data(), 1, channels);
      const std::vector<float> ws_t = transposed(context->input(5).flat<float>().data(), 1, channels);
      const std::vector<float> zeros(channels, 0.0f);
      float* dh = dh_tensor.flat<float>().data();
      float* dx = outputs[0]->flat<float>().data();
      const int tile = std::min(s.tile, s.steps), tiles = s.tiles, halo = 2 * s.pad;  // buffers: one tile
      const float alpha = s.alpha;

      // dp for padded rows [first, first + count) of item b, into out (count x C): the dilated
      // conv's input gradient, from dh rows [first - halo, first + count), zero outside [0, T)
      // (copied into `window` only there). Taps that read only zeros are left out.
      auto padded_gradient = [&](int b, int first, int count, float* window, float* out) {
        const int start = first - halo;
        const float* rows = nullptr;
        if (start >= 0 && first + count <= s.steps) {
          rows = dh + s.row(b, start);
        } else {
          for (int j = 0; j < count + halo; ++j) {
            const int t = start + j;
            float* row = window + static_cast<int64_t>(j) * channels;
            if (t < 0 || t >= s.steps) std::fill(row, row + channels, 0.0f);
            else std::copy(dh + s.row(b, t), dh + s.row(b, t) + channels, row);
          }
          rows = window;
        }
        std::vector<Product> taps_of;
        for (int k = 0; k < taps; ++k) {
          const int lowest = first - k * s.dilation;  // the dh rows tap k reads: [lowest, lowest + count)
          if (lowest + count > 0 && lowest < s.steps)
            taps_of.push_back({rows + static_cast<int64_t>(halo - k * s.dilation) * channels, channels,
                               wd_t.data() + k * square, channels, channels});
        }
        matmul(count, channels, taps_of.data(), taps_of.size(), zeros.data(), out, channels, false, alpha);
      };
      auto rows_of = [&](int part, auto per_tile) {
        for (int64_t job = jobs * part / parts; job < jobs * (part + 1) / parts; ++job) {
          const int b = job / tiles, t0 = (job % tiles) * tile;
          per_tile(b, t0, std::min(tile, s.steps - t0));
        }
      };

      for_each_part(context, parts, [&](int part) {
        float* d_wd = sums.data() + part * per_part;
        float* d_wp = d_wd + taps * square;
        float* d_ws = d_wp + square;
        float* d_bd = d_ws + square;
        float* d_bp = d_bd + channels;
        std::vector<float> gradient(tile * channels);
        rows_of(part, [&](int b, int t0, int rows) {
          const float* dy_tile = dy + s.row(b, t0);
          const float* g_tile = hidden + s.row(b, t0);
          float* dh_tile = dh + s.row(b, t0);
          const Product through_pointwise = {dy_tile, channels, wp_t.data(), channels, channels};
          matmul(rows, channels, &through_pointwise, 1, zeros.data(), gradient.data(), channels, false, alpha);
          for (int64_t i = 0; i < int64_t{rows} * channels; i += kLanes) {
            const Vec d = load(gradient.data() + i), g = load(g_tile + i), slope = g > Vec{} ? broadcast(1.0f) : broadcast(alpha);
            store(dh_tile + i, d * slope);
          }
          for (int r = 0; r < rows; ++r)
            for (int c = 0; c < channels; c += kLanes) {
              store(d_bd + c, load(d_bd + c) + load(dh_tile + r * channels + c));
              store(d_bp + c, load(d_bp + c) + load(dy_tile + r * channels + c));
            }
          const Product pointwise = {g_tile, 1, dy_tile, channels, rows, channels};
          const Product shortcut = {xs + s.row(b, t0), 1, dy_tile, channels, rows, channels};
          matmul(channels, channels, &pointwise, 1, nullptr, d_wp, channels, false, alpha);
          matmul(channels, channels, &shortcut, 1, nullptr, d_ws, channels, false, alpha);
        });
      });

      for_each_part(context, parts, [&](int part) {
        float* d_wd = sums.data() + part * per_part;
        std::vector<float> padded((tile + halo) * channels), window((tile + halo) * channels);
        rows_of(part, [&](int b, int t0, int rows) {
          const int64_t first = s.row(b, t0);
          activated_padded(xs + s.row(b, 0), s, t0, rows + halo, padded.data());
          for (int k = 0; k < taps; ++k) {
            const Product tap = {padded.data() + k * s.dilation * channels, 1, dh + first, channels, rows, channels};
            matmul(channels, channels, &tap, 1, nullptr, d_wd + k * square, channels, false, alpha);
          }
          float* dx_tile = dx + first;
          padded_gradient(b, s.pad + t0, rows, window.data(), dx_tile);
          for (int64_t i = 0; i < int64_t{rows} * channels; i += kLanes) {
            const Vec v = load(xs + first + i);
            store(dx_tile + i, load(dx_tile + i) * (v > Vec{} ? broadcast(1.0f) : broadcast(alpha)));
          }
          const Product shortcut = {dy + first, channels, ws_t.data(), channels, channels};
          matmul(rows, channels, &shortcut, 1, nullptr, dx_tile, channels, false, alpha);
        });
      });

      // The reflected edges, item by item: padded row j < pad is x row pad - j, padded row
      // pad + T + j is x row T - 2 - j.
      for_each_part(context, s.pad > 0 ? std::min(parts, s.batch) : 0, [&](int part) {
        std::vector<float> window((s.pad + halo) * channels), edge(s.pad * channels);
        const int items = std::min(parts, s.batch);
        for (int b = s.batch * part / items; b < s.batch * (part + 1) / items; ++b) {
          for (int side = 0; side < 2; ++side) {
            padded_gradient(b, side ? s.pad + s.steps : 0, s.pad, window.data(), edge.data());
            for (int j = 0; j < s.pad; ++j) {
              const int t = side ? s.steps - 2 - j : s.pad - j;
              const float* from = edge.data() + static_cast<int64_t>(j) * channels;
              for (int c = 0; c < channels; c += kLanes) {
                const Vec v = load(xs + s.row(b, t) + c);
                float* to = dx + s.row(b, t) + c;
                store(to, load(to) + load(from + c) * (v > Vec{} ? broadcast(1.0f) : broadcast(alpha)));
              }
            }
          }
        }
      });
    }
    // The parts' sums, in the outputs' order: dWd, dbd, dWp, dbp, dWs, dbs (= dbp).
    const int64_t offsets[6] = {0, (taps + 2) * square, taps * square, (taps + 2) * square + channels,
                                (taps + 1) * square, (taps + 2) * square + channels};
    const int64_t sizes[6] = {taps * square, channels, square, channels, square, channels};
    for (int i = 0; i < 6; ++i) {
      float* out = outputs[i + 1]->flat<float>().data();
      std::fill(out, out + sizes[i], 0.0f);
      for (int part = 0; part < parts; ++part)
        for (int64_t e = 0; e < sizes[i]; ++e) out[e] += sums[part * per_part + offsets[i] + e];
    }
  }

 private:
  int dilation_;
  float alpha_;
};

REGISTER_KERNEL_BUILDER(Name("TtsResidualStackGrad").Device(tensorflow::DEVICE_CPU), TtsResidualStackGradOp);
