// clflow launch overhead: a kernel that does nothing. Its time from the
// profiling events, on one work-group and on many, is what a launch costs
// before any work (the device's start-up and each work-group's scheduling).
__kernel void bench_empty(void) {}
