//! Binding a buffer's memory to one NUMA node with mbind(2).

use std::io;
use std::path::Path;

const MPOL_BIND: libc::c_int = 2;
const MPOL_MF_STRICT: libc::c_uint = 1 << 0;
const MPOL_MF_MOVE: libc::c_uint = 1 << 1;

/// Whether the kernel knows NUMA node `node`.
pub fn node_exists(node: usize) -> bool {
    Path::new(&format!("/sys/devices/system/node/node{node}")).exists()
}

/// Binds the buffer's memory to `node`; call before the memory is touched.
pub fn bind_to_node(buffer: &super::Buffer, node: usize) -> io::Result<()> {
    let (addr, len) = buffer.region();
    let bits = 8 * std::mem::size_of::<libc::c_ulong>();
    let mut mask = vec![0 as libc::c_ulong; node / bits + 1];
    mask[node / bits] |= 1 << (node % bits);
    // SAFETY: `addr..addr+len` is a mapping we own; `mask` holds `mask.len() * bits`
    // bits, which is the maxnode we pass (+1 as the kernel's off-by-one expects).
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mbind,
            addr,
            len,
            MPOL_BIND,
            mask.as_ptr(),
            mask.len() * bits + 1,
            MPOL_MF_STRICT | MPOL_MF_MOVE,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_zero_exists_and_binding_to_it_works() {
        if !node_exists(0) {
            return; // a kernel built without NUMA has no node directories
        }
        let mut buf =
            crate::platform::Buffer::map(1 << 20, crate::platform::PageRequest::Base).unwrap();
        match bind_to_node(&buf, 0) {
            Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {
                eprintln!("skipped: mbind is not implemented here (emulator?)");
                return;
            }
            result => result.unwrap(),
        }
        buf.fill();
        assert!(!node_exists(4095));
    }
}
