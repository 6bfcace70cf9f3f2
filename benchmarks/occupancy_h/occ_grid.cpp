// Reads cases from stdin, one per line:
//   major minor maxThreadsPerSM sharedPerSM sharedOptin reservedPerBlock threads regs static dynamic optin maxDynamic
// fills cudaOccDeviceProp / cudaOccFuncAttributes as described, calls NVIDIA's
// cudaOccMaxActiveBlocksPerMultiprocessor (cuda_occupancy.h, host code only, no GPU needed) and
// prints: blocks limitingFactors blockLimitRegs blockLimitSharedMem blockLimitWarps blockLimitBlocks error
#include <cstdio>
#include <cuda_occupancy.h>

int main() {
    int major, minor, tpsm, threads, regs, optin;
    long shsm, shoptin, reserved, stat, dyn, maxdyn;
    while (std::scanf("%d %d %d %ld %ld %ld %d %d %ld %ld %d %ld", &major, &minor, &tpsm, &shsm,
                      &shoptin, &reserved, &threads, &regs, &stat, &dyn, &optin, &maxdyn) == 12) {
        cudaOccDeviceProp prop;
        prop.computeMajor = major;
        prop.computeMinor = minor;
        prop.maxThreadsPerBlock = 1024;
        prop.maxThreadsPerMultiprocessor = tpsm;
        prop.regsPerBlock = 65536;
        prop.regsPerMultiprocessor = 65536;
        prop.warpSize = 32;
        prop.sharedMemPerBlock = 48 * 1024;
        prop.sharedMemPerMultiprocessor = shsm;
        prop.numSms = 1;
        prop.sharedMemPerBlockOptin = shoptin;
        prop.reservedSharedMemPerBlock = reserved;
        cudaOccFuncAttributes attr;
        attr.maxThreadsPerBlock = 1024;
        attr.numRegs = regs;
        attr.sharedSizeBytes = stat;
        attr.partitionedGCConfig = PARTITIONED_GC_OFF;
        attr.shmemLimitConfig = optin ? FUNC_SHMEM_LIMIT_OPTIN : FUNC_SHMEM_LIMIT_DEFAULT;
        attr.maxDynamicSharedSizeBytes = optin ? maxdyn : 0;
        attr.numBlockBarriers = 1;
        cudaOccDeviceState state;
        cudaOccResult res;
        cudaOccError err = cudaOccMaxActiveBlocksPerMultiprocessor(&res, &prop, &attr, &state,
                                                                   threads, (size_t)dyn);
        if (err != CUDA_OCC_SUCCESS) {
            std::printf("0 0 0 0 0 0 %d\n", (int)err);
        } else {
            std::printf("%d %u %d %d %d %d 0\n", res.activeBlocksPerMultiprocessor,
                        res.limitingFactors, res.blockLimitRegs, res.blockLimitSharedMem,
                        res.blockLimitWarps, res.blockLimitBlocks);
        }
    }
    return 0;
}
