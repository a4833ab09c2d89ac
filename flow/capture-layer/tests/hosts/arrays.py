"""pyopencl's own kernels, generated at run time by its library: array
reductions (sum, max, dot), an in-place inclusive scan, and an elementwise
kernel, over 5,000 elements or the number given as the argument. Prints
what they computed."""
import sys

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
from pyopencl.elementwise import ElementwiseKernel
from pyopencl.scan import InclusiveScanKernel

context = cl.create_some_context(interactive=False)
queue = cl.CommandQueue(context)
n = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
a = cla.to_device(queue, (np.arange(n) % 17).astype(np.float32))
b = cla.to_device(queue, (np.arange(n) % 5).astype(np.int32))
total = cla.sum(a).get()
largest = cla.max(a).get()
dot = cla.dot(a, a).get()
scan = InclusiveScanKernel(context, np.int32, "a+b", neutral="0")
prefix = scan(b.copy()).get()
line = ElementwiseKernel(context, "float *x, float *y, float k", "y[i] = k * x[i] + 1.0f", "line")
y = cla.empty_like(a)
line(a, y, np.float32(2.0))
print("sum", total, "max", largest, "dot", dot, "scan", prefix[-1], "line", y.get()[:3])
