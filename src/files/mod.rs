//! Files, below every other module: BLAKE3 hashes of bytes and files, the stat cache
//! that knows a file's hash without reading it, atomic writes through temporary names
//! that carry their writer's process id, the sweep of the ones a killed okb left, and
//! the header shared by okb's binary files, and the read-ahead advice for a file read at random. It uses nothing else of okb, so any phase,
//! the build engine and the commands use it without depending on one another.

pub mod access;
pub mod framing;
pub mod hash;
pub mod list;
pub mod states;
pub mod temp;
pub mod write;

pub use hash::{Hash, hash_bytes, hash_file, hash_own_file};
pub use list::files_in;
pub use states::FileStates;
pub use write::{ExportFile, write_atomic};
