// Reflect padding along time, as the kernels that pad a signal themselves read it.
#ifndef TENSORFLOW_TTS_KERNELS_REFLECT_H_
#define TENSORFLOW_TTS_KERNELS_REFLECT_H_

#include <cstdint>

namespace tts_kernels {

// The step of a signal of `steps` steps that step t of it padded by `size` on both sides holds:
// the edges reflect without repeating the first and last steps (tf.pad's "REFLECT").
inline int64_t reflected(int64_t t, int64_t size, int64_t steps) {
  int64_t source = t - size;
  if (source < 0) source = -source;
  if (source >= steps) source = 2 * (steps - 1) - source;
  return source;
}

}  // namespace tts_kernels

#endif  // TENSORFLOW_TTS_KERNELS_REFLECT_H_
