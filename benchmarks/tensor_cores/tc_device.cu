// Tensor-core device functions called from numba kernels (chapter 09).
//
// Build to PTX and link with @cuda.jit(link=[...]) + cuda.declare_device:
//     nvcc -arch=sm_90 -rdc=true -ptx tc_device.cu -o build/tc_device.ptx
// (linking this .cu directly through NVRTC failed on the H200 machine: the pip CUDA headers
// lack crt/mma.h, see DESIGN.md section 4.)
//
// Both functions use numba's ABI for foreign device functions:
//     extern "C" __device__ int f(int *return_value, args...)   // return 0 = no exception
// and are warp-collective: all 32 lanes of the warp must call them together.
#include <cuda_fp16.h>
#include <mma.h>

using namespace nvcuda;

// One warp computes the 16x16 tile (tile_row, tile_col) of C = A x B with wmma:
// A is M x K, B is K x N (both fp16, row-major), C is M x N fp32 row-major.
// M, N, K must be multiples of 16. The fragment layout inside wmma is unspecified (CUDA C++
// Programming Guide, "Warp Matrix Functions"), so only whole tiles go in and out.
extern "C" __device__ int wmma_tile_gemm(int *ret, const __half *A, const __half *B, float *C,
                                         int M, int N, int K, int tile_row, int tile_col) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k = 0; k < K; k += 16) {
        wmma::load_matrix_sync(a, A + (size_t)tile_row * 16 * K + k, K);
        wmma::load_matrix_sync(b, B + (size_t)k * N + tile_col * 16, N);
        wmma::mma_sync(acc, a, b, acc);
    }
    wmma::store_matrix_sync(C + (size_t)tile_row * 16 * N + tile_col * 16, acc, N,
                            wmma::mem_row_major);
    *ret = 0;
    return 0;
}

// One mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32, with every lane supplying exactly
// the registers the PTX ISA assigns to it ("Matrix Fragments for mma.m16n8k16 with floating
// point type"). The host lays the fragments out per lane with gpulab.models.mma:
//   a_regs: 32 lanes x 4 .f16x2 registers (a0..a7, low half first)
//   b_regs: 32 lanes x 2 .f16x2 registers (b0..b3)
//   c_frag, d_frag: 32 lanes x 4 floats (c0..c3 / d0..d3)
// If gpulab's layout were wrong, D reassembled with it would not equal A x B + C.
extern "C" __device__ int mma_m16n8k16_lane(int *ret, const unsigned *a_regs,
                                            const unsigned *b_regs, const float *c_frag,
                                            float *d_frag, int lane) {
    const unsigned *a = a_regs + 4 * lane;
    const unsigned *b = b_regs + 2 * lane;
    const float *c = c_frag + 4 * lane;
    float d0, d1, d2, d3;
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
        : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),
          "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
    float *d = d_frag + 4 * lane;
    d[0] = d0;
    d[1] = d1;
    d[2] = d2;
    d[3] = d3;
    *ret = 0;
    return 0;
}
