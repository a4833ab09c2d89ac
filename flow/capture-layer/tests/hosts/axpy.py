"""A pyopencl script, unaware of clflow: y = a*x + y, three times."""
import numpy as np
import pyopencl as cl
ctx = cl.create_some_context(interactive=False)
queue = cl.CommandQueue(ctx)
n = 1000
x = np.arange(n, dtype=np.float32)
y = np.ones(n, dtype=np.float32)
mf = cl.mem_flags
xb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
yb = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=y)
prg = cl.Program(ctx, """
__kernel void axpy(float a, __global const float *x, __global float *y) {
  int i = get_global_id(0);
  y[i] = a * x[i] + y[i];
}""").build()
for _ in range(3):
    prg.axpy(queue, (n,), None, np.float32(2.0), xb, yb)
cl.enqueue_copy(queue, y, yb)
print("axpy checksum", float(y.sum()))
