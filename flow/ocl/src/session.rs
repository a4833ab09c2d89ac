//! One context and profiling queue on a device that several launches
//! share, with buffers they share: a benchmark series makes its large
//! arrays once, not once a launch (making and filling them costs more than
//! the launches that time them).

use crate::discovery::OclDevice;
use crate::error::{Result, Step};
use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::memory::{Buffer, ClMem, CL_MEM_COPY_HOST_PTR, CL_MEM_READ_WRITE};
use opencl3::types::cl_mem;
use std::ffi::c_void;

/// A context and a profiling queue on one device.
pub struct Session {
    pub(crate) device: OclDevice,
    // The queue before the context: fields drop in order.
    pub(crate) queue: CommandQueue,
    pub(crate) context: Context,
}

/// A buffer in a [`Session`] that launches prepared on it take in place of
/// an argument's own bytes ([`crate::PreparedLaunch::on`]). Its contents are
/// the caller's: a launch neither restores nor reads them back.
pub struct SharedBuffer {
    buffer: Buffer<u8>,
}

impl Session {
    pub fn new(device: &OclDevice) -> Result<Self> {
        let context = Context::from_device(&device.device)
            .step(|| format!("creating a context on {}", device.info.label()))?;
        // clCreateCommandQueue (OpenCL 1.x) is the call every runtime has,
        // Oclgrind's 1.2 included.
        let queue = unsafe {
            CommandQueue::create(&context, device.device.id(), CL_QUEUE_PROFILING_ENABLE)
        }
        .step(|| format!("creating a profiling queue on {}", device.info.label()))?;
        Ok(Session { device: device.clone(), queue, context })
    }

    /// A read-write buffer holding a copy of `bytes` (at least one byte).
    pub fn buffer(&self, bytes: &[u8], what: &str) -> Result<SharedBuffer> {
        // SAFETY: `bytes` outlives the call, which copies it (COPY_HOST_PTR).
        let buffer = unsafe {
            Buffer::<u8>::create(
                &self.context,
                CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                bytes.len(),
                bytes.as_ptr() as *mut c_void,
            )
        }
        .step(|| format!("creating the shared buffer {what} ({} bytes)", bytes.len()))?;
        Ok(SharedBuffer { buffer })
    }
}

impl SharedBuffer {
    pub(crate) fn mem(&self) -> cl_mem {
        self.buffer.get()
    }
}
