// A conv kernel with its taps reversed and each tap's matrix transposed, in one pass:
//
//   out[K - 1 - k] = in[k]^T        in (K, A, B) -> out (K, B, A)
//
// The input gradient of a stride-1 conv is a forward conv of dy with its kernel so flipped
// (layers/conv1d.py, input_gradient), and a transposed conv's polyphase kernel is its stored
// kernel so flipped (layers/upsample.py, polyphase_kernel). TensorFlow makes it a ReverseV2 and a
// Transpose, two ops and two passes, each with oneDNN's per-call set-up: in a serial profile of
// the harness's MB-MelGAN generator step (one op at a time, AMD Zen 5) the input gradients' pairs
// took 0.049 of the summed op time and the upsamplers' kernel rearrangements (both ways) 0.030,
// for kernels of at most a few hundred KB; with this op all of it took 0.018. The op is a
// permutation: its gradient is the same op (layers/conv1d.py). float32 is moved in tiles of
// 16 x 16 values transposed in registers; the other types (and the edges) value by value.
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>

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

using tts_kernels::kLanes;
using tts_kernels::load;
using tts_kernels::store;
using tts_kernels::Vec;

constexpr int64_t kTile = kLanes;  // a tile of kTile x kTile values is read by rows and written by columns
// Kernels of at least this many values are flipped on more than one thread. On two threads
// (AMD Zen 5) two took 0.86 of one's time at 8 x 384 x 192 values and 1.3-1.8x at 3 x 192 x 192
// and 7 x 80 x 384, where handing the work over costs more than it saves.
constexpr int64_t kShareFrom = int64_t{1} << 19;

// Lane j of the result is lane Pick[j] of a's and b's lanes side by side (b's from kLanes on).
// Clang and GCC 12 on have __builtin_shufflevector; GCC before 12 only __builtin_shuffle.
template <size_t... Pick>
inline Vec shuffle(Vec a, Vec b) {
#if defined(__clang__)
  return __builtin_shufflevector(a, b, Pick...);
#else
  typedef int Lanes __attribute__((vector_size(sizeof(Vec))));
  return __builtin_shuffle(a, b, Lanes{static_cast<int>(Pick)...});
#endif
}

// One step of a 16 x 16 transpose in registers: rows i and i + h (i & h == 0) swap their
// off-diagonal h-blocks. After the steps for h = 8, 4, 2, 1, row j holds column j.
template <size_t h, size_t... J>
inline Vec low_blocks(Vec a, Vec b, std::index_sequence<J...>) {
  return shuffle<((J & h) == 0 ? J : kLanes + J - h)...>(a, b);
}
template <size_t h, size_t... J>
inline Vec high_blocks(Vec a, Vec b, std::index_sequence<J...>) {
  return shuffle<((J & h) == 0 ? J + h : kLanes + J)...>(a, b);
}
template <size_t h>
inline void swap_blocks(Vec* r) {
  for (size_t i = 0; i < kLanes; ++i) {
    if ((i & h) != 0) continue;
    const Vec a = r[i], b = r[i + h];
    r[i] = low_blocks<h>(a, b, std::make_index_sequence<kLanes>{});
    r[i + h] = high_blocks<h>(a, b, std::make_index_sequence<kLanes>{});
  }
}

// out[b * out_stride + a] = in[a * in_stride + b] for a, b < kTile, float32 in registers.
inline void transpose_tile(const float* in, int64_t in_stride, float* out, int64_t out_stride) {
  Vec r[kLanes];
  for (int i = 0; i < kLanes; ++i) r[i] = load(in + i * in_stride);
  swap_blocks<8>(r);
  swap_blocks<4>(r);
  swap_blocks<2>(r);
  swap_blocks<1>(r);
  for (int i = 0; i < kLanes; ++i) store(out + i * out_stride, r[i]);
}

}  // namespace

REGISTER_OP("TtsFlippedKernel")
    .Input("kernel: T")  // (K, A, B)
    .Attr("T: {float, bfloat16, half, double}")
    .Output("flipped: T")  // (K, B, A)
    .SetShapeFn([](tensorflow::shape_inference::InferenceContext* c) {
      tensorflow::shape_inference::ShapeHandle kernel;
      TF_RETURN_IF_ERROR(c->WithRank(c->input(0), 3, &kernel));
      c->set_output(0, c->MakeShape({c->Dim(kernel, 0), c->Dim(kernel, 2), c->Dim(kernel, 1)}));
      return absl::OkStatus();
    });

template <typename T>
class TtsFlippedKernelOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& kernel = context->input(0);
    OP_REQUIRES(context, kernel.dims() == 3, absl::InvalidArgumentError("kernel must be (K, A, B)"));
    const int64_t taps = kernel.dim_size(0), rows = kernel.dim_size(1), columns = kernel.dim_size(2);
    Tensor* output = nullptr;
    OP_REQUIRES_OK(context, context->allocate_output(0, {taps, columns, rows}, &output));
    if (output->NumElements() == 0) return;
    const T* in = kernel.flat<T>().data();
    T* out = output->flat<T>().data();
    // Units of work: one band of kTile rows of one tap, all its columns; shared out on TensorFlow's
    // CPU threads only for large kernels (`kShareFrom`).
    const int64_t bands = (rows + kTile - 1) / kTile;
    auto* threads = context->device()->tensorflow_cpu_worker_threads();
    const int parallelism = output->NumElements() >= kShareFrom ? threads->num_threads : 1;
    tensorflow::Shard(parallelism, threads->workers, taps * bands, 2 * kTile * columns,
                      [&](int64_t begin, int64_t end) {
                        for (int64_t unit = begin; unit < end; ++unit) {
                          const int64_t k = unit / bands, a0 = unit % bands * kTile;
                          const int64_t a1 = std::min(rows, a0 + kTile);
                          const T* tap = in + k * rows * columns;
                          T* flipped = out + (taps - 1 - k) * columns * rows;
                          for (int64_t b0 = 0; b0 < columns; b0 += kTile) {
                            const int64_t b1 = std::min(columns, b0 + kTile);
                            if constexpr (std::is_same_v<T, float>) {
                              if (a1 - a0 == kTile && b1 - b0 == kTile) {
                                transpose_tile(tap + a0 * columns + b0, columns, flipped + b0 * rows + a0, rows);
                                continue;
                              }
                            }
                            for (int64_t b = b0; b < b1; ++b)
                              for (int64_t a = a0; a < a1; ++a) flipped[b * rows + a] = tap[a * columns + b];
                          }
                        }
                      });
  }
};

#define TTS_REGISTER_FLIPPED_KERNEL(T)                                                              \
  REGISTER_KERNEL_BUILDER(Name("TtsFlippedKernel").Device(tensorflow::DEVICE_CPU).TypeConstraint<T>("T"), \
                          TtsFlippedKernelOp<T>)
TTS_REGISTER_FLIPPED_KERNEL(float);
TTS_REGISTER_FLIPPED_KERNEL(double);
TTS_REGISTER_FLIPPED_KERNEL(tensorflow::bfloat16);
TTS_REGISTER_FLIPPED_KERNEL(Eigen::half);
#undef TTS_REGISTER_FLIPPED_KERNEL
