//! A raw system call's result as an `io::Result`, for the code that runs between `fork` and
//! `exec`.

use std::io;

/// `Ok` for a successful system call, else the OS error.
pub fn check(result: libc::c_int) -> io::Result<()> {
    if result < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}
