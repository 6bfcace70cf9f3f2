// One warp's tensor-core work on one k-tile of a tiled fp16 x fp16 -> fp32 GEMM (chapter 11).
//
// gpulab/kernels/gemm_tc.py writes the numba kernel around it: that kernel copies the A and B tiles
// from global to shared memory and calls warp_mma_ktile once per k-tile; this file only turns
// shared-memory tiles into fragments (ldmatrix) and fragments into products (mma.sync).
//
// numba compiles this file with NVRTC to LTO-IR and nvJitLink links it with the kernel's own LTO-IR,
// so the call is inlined and `acc` (the caller's cuda.local.array) stays in registers; linked as
// plain PTX, the call would be a real call and the accumulators would live in local memory.
// No #include: NVRTC's built-ins are enough (the pip CUDA headers lack crt/mma.h, DESIGN.md 4).
//
// Shared layouts (halves, padded so each ldmatrix row address lands in a different 16-byte bank
// group): A tile [BM][LDA] row-major (m, k), B tile [BK][LDB] row-major (k, n).
// Fragments are PTX's for mma.m16n8k16 (PTX ISA, "Matrix Fragments for mma.m16n8k16"):
// lane l holds C rows l/4 and l/4 + 8, columns 2*(l%4) and 2*(l%4) + 1 of each 16 x 8 tile, as
// acc[((mi * NT) + ni) * 4 + {0, 1, 2, 3}] = C[g][2q], C[g][2q+1], C[g+8][2q], C[g+8][2q+1].

__device__ __forceinline__ unsigned smem_addr(const void *p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// ldmatrix.x4: four 8x8 b16 matrices; lane l gives the address of row l%8 of matrix l/8.
__device__ __forceinline__ void ldsm_x4(unsigned addr, unsigned &r0, unsigned &r1, unsigned &r2,
                                        unsigned &r3) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(addr));
}

// The same, transposed on the way in: rows of B (k) become the fragment's columns.
__device__ __forceinline__ void ldsm_x4_trans(unsigned addr, unsigned &r0, unsigned &r1, unsigned &r2,
                                              unsigned &r3) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(addr));
}

// D = A B + D for one 16 x 8 x 16 tile, fp16 inputs, fp32 accumulators.
__device__ __forceinline__ void mma_16816(float *d, const unsigned *a, unsigned b0, unsigned b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// One warp, one k-tile: acc[WM/16][WN/8][4] += A[warp_row : +WM, 0:BK] x B[0:BK, warp_col : +WN].
// sa, sb: the k-tile's A and B in shared memory; warp_row, warp_col: the warp's sub-tile in them.
// SWZ: rows are not padded (LDA = BK, LDB = BN); instead the 16-byte chunk c of row r is stored at
// chunk c ^ key(r), key = (r >> 1) & 3 for 64-byte rows (BK = 32), r & 7 for rows of 128 bytes or more,
// so ldmatrix's 8 rows and a half-warp's 128-byte store both touch 8 different bank groups.
template <int WM, int WN, int BK, int LDA, int LDB, bool SWZ>
__device__ __forceinline__ void warp_mma_ktile(float *acc, const unsigned short *sa,
                                               const unsigned short *sb, unsigned warp_row,
                                               unsigned warp_col, unsigned lane) {
    constexpr int MT = WM / 16;  // 16-row tiles of A
    constexpr int NT = WN / 8;   // 8-column tiles of B
    static_assert(WM % 16 == 0 && WN % 16 == 0 && BK % 16 == 0, "warp tile: multiples of 16");
    static_assert(!SWZ || ((BK == 32 || BK == 64) && LDA == BK && LDB % 64 == 0), "swizzle: BK 32/64");
    const unsigned sa0 = smem_addr(sa), sb0 = smem_addr(sb);
    // lane l gives the address of row l % 16 (A), row (l / 8 % 2) * 8 + l % 8 (B) of its 8x8 matrix
    const unsigned a_row = (warp_row + (lane & 15)) * LDA;
    const unsigned b_row = (((lane >> 3) & 1) * 8 + (lane & 7)) * LDB;
    const unsigned a_key = BK == 32 ? ((lane >> 1) & 3) : (lane & 7);  // key(row) of the lane's rows
    const unsigned b_key = lane & 7;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
        unsigned a[MT][4];
        unsigned b[NT][2];
        const unsigned ca = kk / 8 + (lane >> 4);  // the lane's 16-byte chunk of the A row
        const unsigned a_col = 8 * (SWZ ? (ca ^ a_key) : ca);
#pragma unroll
        for (int mi = 0; mi < MT; ++mi)  // rows 0-7/8-15 x k 0-7/8-15: a0..a3 of the fragment
            ldsm_x4(sa0 + 2 * (a_row + mi * 16 * LDA + a_col), a[mi][0], a[mi][1], a[mi][2], a[mi][3]);
#pragma unroll
        for (int nj = 0; nj < NT; nj += 2) {  // k 0-7/8-15 x two 8-column tiles: b0, b1 of each
            const unsigned cb = (warp_col >> 3) + nj + (lane >> 4);  // chunk of the B row
            const unsigned b_col = 8 * (SWZ ? (cb ^ b_key) : cb);
            ldsm_x4_trans(sb0 + 2 * (b_row + kk * LDB + b_col), b[nj][0], b[nj][1], b[nj + 1][0],
                          b[nj + 1][1]);
        }
#pragma unroll
        for (int mi = 0; mi < MT; ++mi)
#pragma unroll
            for (int ni = 0; ni < NT; ++ni)
                mma_16816(acc + (mi * NT + ni) * 4, a[mi], b[ni][0], b[ni][1]);
    }
}

// numba's ABI for a foreign device function: int f(int *return_value, args...), 0 = no exception.
// gemm_tc.py appends one extern "C" instance per variant, e.g.
//   TC_INSTANCE(tc_ktile_64x32_k32_40_136, 64, 32, 32, 40, 136, false)
#define TC_INSTANCE(NAME, WM, WN, BK, LDA, LDB, SWZ)                                                       \
    extern "C" __device__ int NAME(int *ret, float *acc, const void *sa, const void *sb,              \
                                   unsigned warp_row, unsigned warp_col, unsigned lane) {             \
        warp_mma_ktile<WM, WN, BK, LDA, LDB, SWZ>(acc, static_cast<const unsigned short *>(sa),           \
                                             static_cast<const unsigned short *>(sb), warp_row,      \
                                             warp_col, lane);                                        \
        *ret = 0;                                                                                      \
        return 0;                                                                                      \
    }
