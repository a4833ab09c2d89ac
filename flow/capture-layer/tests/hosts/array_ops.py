"""More of pyopencl's own kernels, generated at run time by its library,
over 5,000 elements or the number given as the argument: array arithmetic
(an expression of three arrays), math functions (exp, sqrt, sin), an
element-wise minimum, a gather (take), random numbers (its Philox
generator), a stream compaction (copy_if) and a sum of products
(dot of float64 arrays). Prints what they computed."""
import sys

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pyopencl.clmath as clmath
import pyopencl.clrandom as clrandom
from pyopencl.algorithm import copy_if

context = cl.create_some_context(interactive=False)
queue = cl.CommandQueue(context)
n = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
a = cla.to_device(queue, (np.arange(n) % 17).astype(np.float32))
b = cla.to_device(queue, (np.arange(n) % 5).astype(np.float32))
c = 2 * a + b * a - 1
e = clmath.exp(b)
r = clmath.sqrt(a)
s = clmath.sin(a)
low = cla.minimum(a, b)
indices = cla.to_device(queue, ((np.arange(n) * 7919) % n).astype(np.int32))
taken = cla.take(a, indices)
generator = clrandom.PhiloxGenerator(context, seed=1)
uniform = generator.uniform(queue, n, np.float32)
kept, count, _ = copy_if(a, "ary[i] > 12")
wide = a.astype(np.float64)
dot = cla.dot(wide, wide).get()
print("c", c.get()[:3], "exp", e.get()[:2], "sqrt", r.get()[4], "sin", round(float(s.get()[1]), 4),
      "min", low.get()[:6], "take", taken.get()[:3], "uniform mean",
      round(float(uniform.get().mean()), 2), "kept", int(count.get()),
      "dot", dot)
