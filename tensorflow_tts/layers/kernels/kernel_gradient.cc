// The kernel gradient of a stride-1 1-D convolution (layers/conv1d.py, kernel_gradient) with
// few channels, for training on the CPU in float32 or bfloat16:
//
//   dW[k] = sum over b, t of x_padded[b, t + k * dilation]^T dy[b, t]      (K, C_in, C_out)
//   db    = sum over b, t of dy[b, t]                                       (C_out)
//
// TensorFlow computes each tap as a (C_in x N) x (N x C_out) matmul. With 32-192 channels over
// thousands of rows (MB-MelGAN's generator) the product is long and thin, and oneDNN spreads it
// over two threads poorly. Here the rows are cut into chunks; each thread sums the products of its
// chunks, all taps of a chunk while it is in cache, into its own float32 copy of dW, and the
// copies are added in a fixed order (the same result on every run). The sums are the matmuls' in
// another order (float rounding). While a thread sums a chunk it fetches its next one (`Ahead`).
// The bias gradient (for a conv whose custom gradient takes the bias, layers/conv1d.py) is summed
// from each chunk's rows of dy while they are in cache, where TensorFlow's BiasAddGrad makes a
// pass of its own over dy: the harness's MB-MelGAN generator step took 0.983 and 0.992 of its
// time in float32, 0.978 under mixed_bfloat16 (ours against ours, AMD Zen 5).
//
// bfloat16 inputs are summed in float32 and rounded once, at the end. Where the CPU has
// AVX512-BF16 (the library is built with -march=native), each chunk is first laid out with its
// rows in pairs, the two rows' values of a channel side by side in 32 bits, so that one
// VDPBF16PS multiplies two rows' products into each float32 lane: half the instructions of the
// float32 loop for the same sums. Elsewhere a chunk is widened to float32 and summed as floats.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#if defined(__AVX512BF16__)
#include <immintrin.h>
#endif

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
constexpr int kLine = 64;    // bytes in a cache line

// The next chunk's rows (x's and dy's), fetched into L2 one line of each per row that the current
// chunk's first register blocks walk, so that they are there when its sums start. In a training
// step x is an activation saved long before, out of every cache: on rows out of cache the
// 48-channel kernel gradients took 1.5-2.3x their time on rows in cache, and with the rows fetched
// ahead the harness's MB-MelGAN generator step took 0.98 of its time in float32 and in bfloat16
// (AMD Zen 5; values unchanged).
struct Ahead {
  const char* at[2];
  const char* end[2];
  void step() {
    for (int s = 0; s < 2; ++s)
      if (at[s] < end[s]) {
        __builtin_prefetch(at[s], 0, 2);
        at[s] += kLine;
      }
  }
};

// A float32 value, or a bfloat16 given as its 16 bits widened to float32 (exactly: the high half).
inline float as_float(float value) { return value; }
inline float as_float(uint16_t bits) {
  const uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &wide, sizeof value);
  return value;
}

// The products' arithmetic: float32 rows, one multiply-add per row.
struct FloatRows {
  using Element = float;
  using Operand = Vec;
  static Operand row(const float* p) { return load(p); }
  static Operand spread(float s) { return broadcast(s); }
  static Vec add_product(Vec acc, Operand a, Operand d) { return acc + a * d; }
};

#if defined(__AVX512BF16__)
// Pairs of bfloat16 rows, each element two rows' values of one channel (the first in the low
// half): one VDPBF16PS adds both rows' products to each float32 lane.
struct BFloat16RowPairs {
  using Element = uint32_t;
  using Operand = __m512bh;
  static Operand row(const uint32_t* p) { return (__m512bh)_mm512_loadu_si512(p); }
  static Operand spread(uint32_t s) { return (__m512bh)_mm512_set1_epi32(static_cast<int>(s)); }
  static Vec add_product(Vec acc, Operand a, Operand d) { return (Vec)_mm512_dpbf16_ps((__m512)acc, a, d); }
};
#endif

// out[i, j0 + kLanes * v] += sum over r < steps of a[r * lda + i] * d[r * ldd + j0 + kLanes * v] for
// i < R, v < V: R * V accumulators held in registers while the rows are walked.
template <typename Rows, int R, int V>
void block(const typename Rows::Element* a, int lda, const typename Rows::Element* d, int ldd, int steps, int j0,
           float* out, int ldo, Ahead* ahead) {
  Vec acc[R][V];
  for (int i = 0; i < R; ++i)
    for (int v = 0; v < V; ++v) acc[i][v] = load(out + i * ldo + j0 + kLanes * v);
  d += j0;
  for (int r = 0; r < steps; ++r, a += lda, d += ldd) {
    ahead->step();
    typename Rows::Operand dv[V];
    for (int v = 0; v < V; ++v) dv[v] = Rows::row(d + kLanes * v);
    for (int i = 0; i < R; ++i) {
      const typename Rows::Operand ai = Rows::spread(a[i]);
      for (int v = 0; v < V; ++v) acc[i][v] = Rows::add_product(acc[i][v], ai, dv[v]);
    }
  }
  for (int i = 0; i < R; ++i)
    for (int v = 0; v < V; ++v) store(out + i * ldo + j0 + kLanes * v, acc[i][v]);
}

template <typename Rows, int R>
void block_of(int vecs, const typename Rows::Element* a, int lda, const typename Rows::Element* d, int ldd, int steps,
              int j0, float* out, int ldo, Ahead* ahead) {
  if (vecs == 3) return block<Rows, R, 3>(a, lda, d, ldd, steps, j0, out, ldo, ahead);
  if (vecs == 2) return block<Rows, R, 2>(a, lda, d, ldd, steps, j0, out, ldo, ahead);
  block<Rows, R, 1>(a, lda, d, ldd, steps, j0, out, ldo, ahead);
}

// out (m x n) += a^T d over `steps` rows: a (steps x m) and d (steps x n), rows lda and ldd elements
// apart; n a multiple of kLanes.
template <typename Rows>
void add_product(const typename Rows::Element* a, int lda, int m, const typename Rows::Element* d, int ldd, int n,
                 int steps, float* out, Ahead* ahead) {
  for (int j0 = 0; j0 < n; j0 += kLanes * kMaxVecs) {
    const int vecs = std::min(kMaxVecs, (n - j0) / kLanes);
    int i0 = 0;
    for (; i0 + kRows <= m; i0 += kRows)
      block_of<Rows, kRows>(vecs, a + i0, lda, d, ldd, steps, j0, out + static_cast<int64_t>(i0) * n, n, ahead);
    for (; i0 < m; ++i0)
      block_of<Rows, 1>(vecs, a + i0, lda, d, ldd, steps, j0, out + static_cast<int64_t>(i0) * n, n, ahead);
  }
}

// A thread's buffers for the chunks it lays out again (bfloat16 rows as pairs, or widened).
struct Scratch {
  std::vector<uint32_t> pairs;
  std::vector<float> floats;
};

// The shape of one kernel gradient, and the sums of one chunk of rows of one sequence into `sum`
// (K x C_in x C_out, or K x C_out x C_in where `transposed`).
struct Problem {
  int steps, padded_steps, in_channels, out_channels, taps, dilation;
  bool transposed;  // summed as dW[k]^T (vectors along C_in)
  int64_t tap_size() const { return static_cast<int64_t>(in_channels) * out_channels; }
  int span() const { return dilation * (taps - 1); }  // x's rows past dy's: a chunk reads rows + span of x

  // The rows the chunk at t0 (`rows` long) of the sequence whose x and dy start at x and dy reads,
  // for `Ahead` to fetch: x's rows t0 .. t0 + rows + span and dy's t0 .. t0 + rows.
  template <typename E>
  Ahead rows_read(const E* x, const E* dy, int t0, int rows) const {
    const auto* x0 = reinterpret_cast<const char*>(x + static_cast<int64_t>(t0) * in_channels);
    const auto* d0 = reinterpret_cast<const char*>(dy + static_cast<int64_t>(t0) * out_channels);
    return Ahead{{x0, d0}, {x0 + static_cast<int64_t>(rows + span()) * in_channels * sizeof(E),
                            d0 + static_cast<int64_t>(rows) * out_channels * sizeof(E)}};
  }

  // sum[k] += (x's rows shifted by k * dilation)^T dy over `steps` rows, for each tap k: x_at(shift)
  // points to x's first row for that shift.
  template <typename Rows, typename XAt>
  void add_taps(XAt x_at, const typename Rows::Element* dy, int steps, float* sum, Ahead* ahead) const {
    for (int k = 0; k < taps; ++k) {
      const typename Rows::Element* a = x_at(k * dilation);
      if (transposed)
        add_product<Rows>(dy, out_channels, out_channels, a, in_channels, in_channels, steps, sum + k * tap_size(), ahead);
      else
        add_product<Rows>(a, in_channels, in_channels, dy, out_channels, out_channels, steps, sum + k * tap_size(), ahead);
    }
  }

  // bias[j] += dy[t, j] over the chunk's rows t0 .. t0 + rows (float32, or bfloat16 as its 16 bits).
  template <typename E>
  void add_bias(const E* dy, int t0, int rows, float* __restrict__ bias) const {
    const E* __restrict__ d = dy + static_cast<int64_t>(t0) * out_channels;
    for (int r = 0; r < rows; ++r, d += out_channels)
      for (int j = 0; j < out_channels; ++j) bias[j] += as_float(d[j]);
  }

  // float32: the rows in place.
  void add_chunk(const float* x, const float* dy, int t0, int rows, float* sum, Scratch*, Ahead* ahead) const {
    auto x_at = [&](int shift) { return x + static_cast<int64_t>(t0 + shift) * in_channels; };
    add_taps<FloatRows>(x_at, dy + static_cast<int64_t>(t0) * out_channels, rows, sum, ahead);
  }

  // bfloat16, given as its 16 bits: x (padded_steps x C_in) and dy (steps x C_out) of one sequence.
  void add_chunk(const uint16_t* x, const uint16_t* dy, int t0, int rows, float* sum,
                 Scratch* scratch, Ahead* ahead) const {
    const int span = this->span();
#if defined(__AVX512BF16__)
    // dy's rows t0 + 2p, t0 + 2p + 1 meet x's rows shift + t0 + 2p, shift + t0 + 2p + 1: x is laid
    // out in pairs twice, from row t0 and from row t0 + 1, and each shift reads the layout of its
    // parity. Rows past the sequence are zero.
    const int pairs = (rows + 1) / 2, x_pairs = span / 2 + pairs;
    const int64_t x_size = static_cast<int64_t>(x_pairs) * in_channels;
    const int64_t dy_size = static_cast<int64_t>(pairs) * out_channels;
    scratch->pairs.resize(2 * x_size + dy_size);
    uint32_t* from_even = scratch->pairs.data();
    uint32_t* from_odd = from_even + x_size;
    uint32_t* dy_pairs = from_odd + x_size;
    pair_rows(x, in_channels, t0, padded_steps, x_pairs, from_even);
    if (taps > 1 && dilation % 2) pair_rows(x, in_channels, t0 + 1, padded_steps, x_pairs, from_odd);  // odd shifts
    pair_rows(dy, out_channels, t0, t0 + rows, pairs, dy_pairs);
    auto x_at = [&](int shift) {
      return (shift % 2 ? from_odd : from_even) + static_cast<int64_t>(shift / 2) * in_channels;
    };
    add_taps<BFloat16RowPairs>(x_at, dy_pairs, pairs, sum, ahead);
#else
    // Widened to float32: x's rows t0 .. t0 + rows + span and dy's t0 .. t0 + rows.
    const int64_t x_size = static_cast<int64_t>(rows + span) * in_channels;
    const int64_t dy_size = static_cast<int64_t>(rows) * out_channels;
    scratch->floats.resize(x_size + dy_size);
    float* xs = scratch->floats.data();
    float* dys = xs + x_size;
    widen(x + static_cast<int64_t>(t0) * in_channels, x_size, xs);
    widen(dy + static_cast<int64_t>(t0) * out_channels, dy_size, dys);
    add_taps<FloatRows>([&](int shift) { return xs + static_cast<int64_t>(shift) * in_channels; }, dys, rows, sum, ahead);
#endif
  }

#if defined(__AVX512BF16__)
  // pairs[q * n + c] = v[first + 2q, c] | v[first + 2q + 1, c] << 16 for q < count; rows at or past
  // `end` are zero.
  static void pair_rows(const uint16_t* v, int n, int first, int end, int count, uint32_t* pairs) {
    for (int q = 0; q < count; ++q, pairs += n) {
      const int row = first + 2 * q;
      const uint16_t* low = v + static_cast<int64_t>(row) * n;
      int c = 0;
      if (row + 1 < end)  // both rows there: 16 channels at a time
        for (; c + 16 <= n; c += 16) {
          const __m512i lo = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(low + c)));
          const __m512i hi = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(low + n + c)));
          _mm512_storeu_si512(pairs + c, _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
        }
      for (; c < n; ++c) {
        const uint32_t lo = row < end ? low[c] : 0, hi = row + 1 < end ? low[n + c] : 0;
        pairs[c] = lo | hi << 16;
      }
    }
  }
#else
  static void widen(const uint16_t* v, int64_t size, float* out) {
    for (int64_t i = 0; i < size; ++i) out[i] = as_float(v[i]);
  }
#endif
};

// The 16 bits of a bfloat16 as TensorFlow stores them, and float32 as itself.
inline const float* bits_of(const float* p) { return p; }
inline const uint16_t* bits_of(const tensorflow::bfloat16* p) { return reinterpret_cast<const uint16_t*>(p); }

}  // namespace

REGISTER_OP("TtsConvKernelGradient")
    .Input("x_padded: T")  // (B, T + dilation * (taps - 1), C_in)
    .Input("dy: T")        // (B, T, C_out)
    .Attr("taps: int >= 1")
    .Attr("dilation: int >= 1")
    .Attr("T: {float, bfloat16} = DT_FLOAT")
    .Output("kernel_gradient: T")  // (taps, C_in, C_out)
    .Output("bias_gradient: T")    // (C_out): dy summed over b and t
    .SetShapeFn([](tensorflow::shape_inference::InferenceContext* c) {
      int taps;
      TF_RETURN_IF_ERROR(c->GetAttr("taps", &taps));
      c->set_output(0, c->MakeShape({taps, c->Dim(c->input(0), 2), c->Dim(c->input(1), 2)}));
      c->set_output(1, c->Vector(c->Dim(c->input(1), 2)));
      return absl::OkStatus();
    });

template <typename T>
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
    const int batch = dy.dim_size(0);
    // The vectors run along C_out; where C_out is not a multiple of kLanes and C_in is, along C_in:
    // dW[k]^T = sum of dy^T x_padded[shifted], transposed at the end.
    const Problem problem{static_cast<int>(dy.dim_size(1)), static_cast<int>(x.dim_size(1)),
                          static_cast<int>(x.dim_size(2)), static_cast<int>(dy.dim_size(2)), taps_, dilation_,
                          dy.dim_size(2) % kLanes != 0};
    OP_REQUIRES(context, !problem.transposed || problem.in_channels % kLanes == 0,
                absl::InvalidArgumentError("C_in or C_out must be a multiple of 16"));
    Tensor* output = nullptr;
    OP_REQUIRES_OK(context, context->allocate_output(0, {taps_, problem.in_channels, problem.out_channels}, &output));
    Tensor* bias_output = nullptr;
    OP_REQUIRES_OK(context, context->allocate_output(1, {problem.out_channels}, &bias_output));
    const int64_t size = taps_ * problem.tap_size();
    T* out = output->flat<T>().data();
    T* bias_out = bias_output->flat<T>().data();
    if (batch == 0 || problem.steps == 0) {
      std::fill(out, out + size, T(0.0f));
      std::fill(bias_out, bias_out + problem.out_channels, T(0.0f));
      return;
    }

    const int chunks = (problem.steps + kChunk - 1) / kChunk;
    const int64_t units = static_cast<int64_t>(batch) * chunks;
    auto* threads = context->device()->tensorflow_cpu_worker_threads();
    const int parts = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads->num_threads, units)));
    // Each part sums into its own float32 copy of dW; where dW is float32 and not summed
    // transposed, the first part's copy is the output itself (no copy pass at the end).
    constexpr bool kFloat = std::is_same<T, float>::value;
    const bool in_place = kFloat && !problem.transposed;
    std::vector<float> copies(static_cast<size_t>(in_place ? parts - 1 : parts) * size, 0.0f);  // zeros
    float* first = copies.data();
    if constexpr (kFloat) {
      if (in_place) {
        first = out;
        std::fill(first, first + size, 0.0f);
      }
    }
    auto copy_of = [&](int64_t part) { return part == 0 ? first : copies.data() + (part - int64_t{in_place}) * size; };
    std::vector<float> bias_sums(static_cast<size_t>(parts) * problem.out_channels, 0.0f);  // one per part
    auto bias_of = [&](int64_t part) { return bias_sums.data() + part * problem.out_channels; };
    const auto* xs = bits_of(x.flat<T>().data());
    const auto* dys = bits_of(dy.flat<T>().data());
    // A unit of work: rows t0 .. t0 + rows of sequence b, whose x and dy start at x_of(b) and dy_of(b).
    struct Unit {
      int b, t0, rows;
    };
    auto unit_at = [&](int64_t unit) {
      const int t0 = (unit % chunks) * kChunk;
      return Unit{static_cast<int>(unit / chunks), t0, std::min(kChunk, problem.steps - t0)};
    };
    auto x_of = [&](int b) { return xs + static_cast<int64_t>(b) * problem.padded_steps * problem.in_channels; };
    auto dy_of = [&](int b) { return dys + static_cast<int64_t>(b) * problem.steps * problem.out_channels; };
    auto work = [&](int64_t begin, int64_t end) {
      Scratch scratch;
      for (int64_t part = begin; part < end; ++part) {
        float* sum = copy_of(part);
        float* bias = bias_of(part);
        const int64_t last = units * (part + 1) / parts;
        for (int64_t unit = units * part / parts; unit < last; ++unit) {
          const Unit u = unit_at(unit);
          Ahead ahead{};  // nothing to fetch after a part's last unit
          if (unit + 1 < last) {
            const Unit next = unit_at(unit + 1);
            ahead = problem.rows_read(x_of(next.b), dy_of(next.b), next.t0, next.rows);
          }
          problem.add_chunk(x_of(u.b), dy_of(u.b), u.t0, u.rows, sum, &scratch, &ahead);
          problem.add_bias(dy_of(u.b), u.t0, u.rows, bias);
        }
      }
    };
    const int64_t flops_per_part = 2 * units * kChunk * problem.tap_size() * taps_ / parts;
    tensorflow::Shard(parts, threads->workers, parts, flops_per_part, work);
    // The copies' sum in a fixed order (the first, then each next), into the first: contiguous adds.
    float* total = copy_of(0);
    float* bias_total = bias_of(0);
    for (int part = 1; part < parts; ++part) {
      const float* copy = copy_of(part);
      for (int64_t i = 0; i < size; ++i) total[i] += copy[i];
      const float* bias = bias_of(part);
      for (int j = 0; j < problem.out_channels; ++j) bias_total[j] += bias[j];
    }
    for (int j = 0; j < problem.out_channels; ++j) bias_out[j] = T(bias_total[j]);
    if (in_place) return;
    const int64_t in = problem.in_channels, out_channels = problem.out_channels;
    for (int64_t k = 0; k < taps_; ++k)  // element (k, i, j) of dW was summed at (k, j, i) where transposed
      for (int64_t i = 0; i < in; ++i)
        for (int64_t j = 0; j < out_channels; ++j) {
          const int64_t at = problem.transposed ? j * in + i : i * out_channels + j;
          out[k * problem.tap_size() + i * out_channels + j] = T(total[k * problem.tap_size() + at]);
        }
  }

 private:
  int taps_, dilation_;
};

REGISTER_KERNEL_BUILDER(Name("TtsConvKernelGradient").Device(tensorflow::DEVICE_CPU).TypeConstraint<float>("T"),
                        TtsConvKernelGradientOp<float>);
REGISTER_KERNEL_BUILDER(
    Name("TtsConvKernelGradient").Device(tensorflow::DEVICE_CPU).TypeConstraint<tensorflow::bfloat16>("T"),
    TtsConvKernelGradientOp<tensorflow::bfloat16>);
