// NVTX ranges for Nsight Systems, through the header-only NVTX 3 (the calls do nothing until a
// tool such as nsys injects itself via NVTX_INJECTION64_PATH). Compiled by build.rs when the
// NVTX headers are found; src/cuda/nvtx.rs wraps these two functions.
#include <nvtx3/nvToolsExt.h>

int fluidlab_nvtx_push(const char* name) { return nvtxRangePushA(name); }
int fluidlab_nvtx_pop(void) { return nvtxRangePop(); }
