// A process-wide pool of fixed-size blocks for the IR's Node and Value
// objects (their class-specific operator new/delete). A conversion creates
// and walks ~100k of each: from the pool they come in creation order from
// slabs, so a walk over a graph reads consecutive memory instead of chasing
// pointers through the heap (walking the node list was the largest single
// cost of the optimizer at 100k nodes), and each costs no malloc call.
// Freed blocks are reused first; the slabs are returned to the heap when
// the last block of the pool is freed. Thread-safe (one mutex: a few
// nanoseconds per object, uncontended).
//
// Under AddressSanitizer the pool is bypassed (every block is its own heap
// allocation, freed at once), so that ASan sees a use of a freed Node or
// Value instead of a reused block (scripts/sanitize.sh, scripts/fuzz.sh).
#ifndef JAX2ONNX_IR_OBJECT_POOL_H_
#define JAX2ONNX_IR_OBJECT_POOL_H_

#include <cstddef>
#include <mutex>
#include <new>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define JAX2ONNX_IR_POOL_BYPASSED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define JAX2ONNX_IR_POOL_BYPASSED 1
#endif
#endif

namespace jax2onnx::ir::internal {

#ifdef JAX2ONNX_IR_POOL_BYPASSED
inline constexpr bool kObjectPoolBypassed = true;
#else
inline constexpr bool kObjectPoolBypassed = false;
#endif

template <size_t kBlockSize>
class ObjectPool {
 public:
  static_assert(kBlockSize >= sizeof(void*) &&
                kBlockSize % alignof(std::max_align_t) == 0);

  void* Allocate() {
    if constexpr (kObjectPoolBypassed) return ::operator new(kBlockSize);
    std::lock_guard<std::mutex> lock(mu_);
    ++live_;
    if (free_ != nullptr) {
      void* block = free_;
      free_ = *static_cast<void**>(block);
      return block;
    }
    if (bump_left_ == 0) {
      bump_ = static_cast<char*>(::operator new(kBlocksPerSlab* kBlockSize));
      slabs_.push_back(bump_);
      bump_left_ = kBlocksPerSlab;
    }
    void* block = bump_;
    bump_ += kBlockSize;
    --bump_left_;
    return block;
  }

  void Free(void* block) {
    if constexpr (kObjectPoolBypassed) return ::operator delete(block);
    std::lock_guard<std::mutex> lock(mu_);
    *static_cast<void**>(block) = free_;
    free_ = block;
    if (--live_ == 0) {
      for (char* slab : slabs_) ::operator delete(slab);
      slabs_.clear();
      free_ = nullptr;
      bump_ = nullptr;
      bump_left_ = 0;
    }
  }

 private:
  static constexpr size_t kBlocksPerSlab = 1024;
  std::mutex mu_;
  std::vector<char*> slabs_;
  void* free_ = nullptr;
  char* bump_ = nullptr;
  size_t bump_left_ = 0;
  size_t live_ = 0;
};

// The block size for objects of `size` bytes.
constexpr size_t PoolBlockSize(size_t size) {
  constexpr size_t a = alignof(std::max_align_t);
  return (size + a - 1) / a * a;
}

}  // namespace jax2onnx::ir::internal

#endif  // JAX2ONNX_IR_OBJECT_POOL_H_
