// The vectors the kernels compute with: GCC's vector extensions, so the compiler picks the widest
// vectors of the CPU it is built on (-march=native) and splits them where the CPU's are narrower.
#ifndef TENSORFLOW_TTS_KERNELS_VECTORS_H_
#define TENSORFLOW_TTS_KERNELS_VECTORS_H_

#include <cstddef>
#include <utility>

namespace tts_kernels {

constexpr int kLanes = 16;  // floats per vector

typedef float Vec __attribute__((vector_size(kLanes * sizeof(float))));
typedef float UnalignedVec __attribute__((vector_size(kLanes * sizeof(float)), aligned(sizeof(float))));

inline Vec load(const float* p) { return *reinterpret_cast<const UnalignedVec*>(p); }
inline void store(float* p, Vec v) { *reinterpret_cast<UnalignedVec*>(p) = v; }
// Every lane s (not Vec{} + s: without -ffast-math that compiles to a scalar add before each broadcast).
template <size_t... Lane>
inline Vec splat(float s, std::index_sequence<Lane...>) { return Vec{((void)Lane, s)...}; }
inline Vec broadcast(float s) { return splat(s, std::make_index_sequence<kLanes>{}); }

}  // namespace tts_kernels

#endif  // TENSORFLOW_TTS_KERNELS_VECTORS_H_
