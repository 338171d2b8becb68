#pragma once
/** @brief The heap settings of every command that runs a model (train, eval, export). */

namespace slimtrain::runtime {

/**
 * @brief Keeps freed memory in glibc's heap (mmap threshold 128 MiB, trim threshold 1 GiB).
 * Otherwise glibc hands each batch's activation buffers back to the kernel and faults them in
 * again on the next one: about 8000 page faults per cnn-small training step (a fifth of the step
 * time), and a third of `slimtrain eval`'s time (26.1 s instead of 16.6 s for Fashion-MNIST's
 * training split on one thread). The cost is the peak, which stays resident. Every thread
 * allocates from the one main arena (unless MALLOC_ARENA_MAX is set), so that
 * release_freed_memory() reaches all of the heap: bench/memory's np 4 `--shard gradients` peak
 * fell by 2.5 MB per rank. Call it before any thread starts (MPI_Init's too): a thread that has
 * allocated keeps its own arena. No-op without glibc.
 */
void keep_freed_memory();

/**
 * @brief --shard parameters' heap on a CPU: buffers of 16 MiB and more mapped apart and returned to
 * the kernel when freed, and a free top of the heap trimmed past 64 MiB. Such a run holds each
 * layer's weights for a moment; kept, what a layer freed stays resident beside the next layer's
 * weights, which the heap cannot reuse when they are larger (bench/zero3's np 4 rank held 0.45 GB
 * of freed memory between steps). The price is page faults on every gather. No-op without glibc.
 */
void return_freed_memory();

/**
 * @brief Hands what is free in the heap back to the kernel once (malloc_trim): start-up's one-off
 * buffers (the model probe's gradients, the link probe's messages) would otherwise stay resident
 * beside the training state for the whole run. No-op without glibc.
 */
void release_freed_memory();

}  // namespace slimtrain::runtime
