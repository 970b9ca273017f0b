//! System calls that touch nothing of this process: no `errno`, no libc
//! state. The init (init.rs) runs beside this process in the same memory
//! (`CLONE_VM`) on a stack of its own, and shares the thread-local storage
//! of the thread that started it: a libc wrapper there would write that
//! thread's `errno` while it runs. These make the call with the CPU's
//! system-call instruction on x86-64 and AArch64 and return `-errno` as
//! the kernel does; elsewhere they go through `libc::syscall`, and the init
//! does not share memory ([`SHARES_MEMORY`]).

/// Whether the init may share this process's memory (these calls leave
/// `errno` alone on this architecture).
pub(super) const SHARES_MEMORY: bool = cfg!(any(target_arch = "x86_64", target_arch = "aarch64"));

/// A system call with up to six arguments; `Err(errno)` on failure.
///
/// # Safety
///
/// The arguments must be valid for the call `nr`.
#[cfg(target_arch = "x86_64")]
pub(super) unsafe fn call(nr: libc::c_long, args: [usize; 6]) -> Result<usize, i32> {
    let ret: isize;
    // SAFETY: the caller's guarantee; the kernel clobbers rcx and r11.
    unsafe {
        std::arch::asm!(
            "syscall",
            inlateout("rax") nr as isize => ret,
            in("rdi") args[0],
            in("rsi") args[1],
            in("rdx") args[2],
            in("r10") args[3],
            in("r8") args[4],
            in("r9") args[5],
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    result(ret)
}

/// A system call with up to six arguments; `Err(errno)` on failure.
///
/// # Safety
///
/// The arguments must be valid for the call `nr`.
#[cfg(target_arch = "aarch64")]
pub(super) unsafe fn call(nr: libc::c_long, args: [usize; 6]) -> Result<usize, i32> {
    let ret: isize;
    // SAFETY: the caller's guarantee.
    unsafe {
        std::arch::asm!(
            "svc 0",
            in("x8") nr,
            inlateout("x0") args[0] as isize => ret,
            in("x1") args[1],
            in("x2") args[2],
            in("x3") args[3],
            in("x4") args[4],
            in("x5") args[5],
            options(nostack),
        );
    }
    result(ret)
}

/// A system call with up to six arguments; `Err(errno)` on failure.
///
/// # Safety
///
/// The arguments must be valid for the call `nr`.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub(super) unsafe fn call(nr: libc::c_long, args: [usize; 6]) -> Result<usize, i32> {
    // SAFETY: the caller's guarantee.
    let ret = unsafe { libc::syscall(nr, args[0], args[1], args[2], args[3], args[4], args[5]) };
    if ret == -1 {
        Err(super::sys::errno())
    } else {
        Ok(usize::try_from(ret).unwrap_or(0))
    }
}

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn result(ret: isize) -> Result<usize, i32> {
    if (-4095..0).contains(&ret) {
        Err(i32::try_from(-ret).unwrap_or(libc::EIO))
    } else {
        Ok(ret.unsigned_abs())
    }
}

/// A pointer as a system-call argument.
pub(super) fn ptr<T>(p: *const T) -> usize {
    p as usize
}

/// A descriptor or other `int` as a system-call argument (sign-extended,
/// as the kernel reads an `int`).
pub(super) fn int(value: libc::c_int) -> usize {
    value as isize as usize
}

/// Ends the calling process (the init is one thread).
pub(super) fn exit(code: libc::c_int) -> ! {
    loop {
        // SAFETY: exit takes an integer and does not return.
        let _ = unsafe { call(libc::SYS_exit_group, [int(code), 0, 0, 0, 0, 0]) };
    }
}
