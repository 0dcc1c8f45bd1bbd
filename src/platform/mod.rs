//! What the machine is and lets memlat do: the processor's name, the
//! operating system's settings that shape a measurement. These are claims
//! and conditions, shown beside measurements, never reported as measured.

pub mod host;
pub mod system;
pub mod uarch;
