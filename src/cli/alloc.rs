//! Allocator settings of the `okb` binary: mimalloc tuning, and SQLite on mimalloc.

unsafe extern "C" {
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
    fn mi_option_get(option: std::ffi::c_int) -> std::ffi::c_long;
    fn mi_malloc(size: usize) -> *mut std::ffi::c_void;
    fn mi_realloc(p: *mut std::ffi::c_void, size: usize) -> *mut std::ffi::c_void;
    fn mi_free(p: *mut std::ffi::c_void);
    fn mi_usable_size(p: *const std::ffi::c_void) -> usize;
    fn mi_good_size(size: usize) -> usize;
}

/// `mi_option_purge_delay` in mimalloc v2's `mi_option_t` (not in the Rust bindings).
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

/// Keeps freed memory in the process instead of returning it to the OS. A build frees
/// one step's values and allocates the next step's moments later; returned memory must
/// be faulted in and zeroed again, which costs a cold ECO build half its page faults.
/// For one-shot commands only: a server would keep its startup peak.
pub fn keep_freed_memory() {
    // SAFETY: plain C calls on mimalloc's option table, valid at any time.
    unsafe {
        // Only where the option is the one meant: purge_delay defaults to 10 (ms).
        if mi_option_get(MI_OPTION_PURGE_DELAY) == 10 {
            mi_option_set(MI_OPTION_PURGE_DELAY, -1);
        }
    }
}

/// Gives SQLite the process's allocator (mimalloc) instead of glibc's malloc. SQLite's
/// page caches come and go with every store connection; glibc maps and unmaps their large
/// blocks each time, so every page of them is faulted in and zeroed again, while
/// mimalloc reuses what the previous connection (or step) freed. Must run before any
/// SQLite use; a later call is refused by SQLite and changes nothing.
pub fn sqlite_uses_mimalloc() {
    use rusqlite::ffi;
    use std::ffi::{c_int, c_void};
    unsafe extern "C" fn malloc(n: c_int) -> *mut c_void {
        // SAFETY: mimalloc's malloc accepts any size.
        unsafe { mi_malloc(n.max(0) as usize) }
    }
    unsafe extern "C" fn free(p: *mut c_void) {
        // SAFETY: SQLite frees only what these methods allocated.
        unsafe { mi_free(p) }
    }
    unsafe extern "C" fn realloc(p: *mut c_void, n: c_int) -> *mut c_void {
        // SAFETY: as for `free`; mimalloc reallocates its own blocks.
        unsafe { mi_realloc(p, n.max(0) as usize) }
    }
    unsafe extern "C" fn size(p: *mut c_void) -> c_int {
        // SAFETY: as for `free`.
        unsafe { mi_usable_size(p) as c_int }
    }
    unsafe extern "C" fn roundup(n: c_int) -> c_int {
        // SAFETY: a pure function of its argument.
        unsafe { mi_good_size(n.max(0) as usize) as c_int }
    }
    unsafe extern "C" fn init(_: *mut c_void) -> c_int {
        ffi::SQLITE_OK
    }
    unsafe extern "C" fn shutdown(_: *mut c_void) {}
    let methods = ffi::sqlite3_mem_methods {
        xMalloc: Some(malloc),
        xFree: Some(free),
        xRealloc: Some(realloc),
        xSize: Some(size),
        xRoundup: Some(roundup),
        xInit: Some(init),
        xShutdown: Some(shutdown),
        pAppData: std::ptr::null_mut(),
    };
    // SAFETY: SQLITE_CONFIG_MALLOC takes a pointer to methods that SQLite copies before
    // it returns; called before SQLite initializes (otherwise SQLite returns
    // SQLITE_MISUSE and keeps its own).
    unsafe {
        ffi::sqlite3_config(ffi::SQLITE_CONFIG_MALLOC, &raw const methods);
    }
}
