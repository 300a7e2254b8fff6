//! BLAKE3 hashes of bytes and files: the identity of every input and output.

use std::path::Path;

/// A BLAKE3 hash in hex.
pub type Hash = String;

/// The BLAKE3 of `bytes`, hex.
pub fn hash_bytes(bytes: &[u8]) -> Hash {
    blake3::hash(bytes).to_hex().to_string()
}

/// The BLAKE3 of a file's bytes, streamed.
pub fn hash_file(file: &Path) -> std::io::Result<Hash> {
    let mut hasher = blake3::Hasher::new();
    hasher.update_reader(std::fs::File::open(file)?)?;
    Ok(hasher.finalize().to_hex().to_string())
}

/// The BLAKE3 of a file okb has just written and nobody else writes (the project lock
/// is held): mapped and hashed on every core, where a store runs to many megabytes.
/// Not for inputs: a mapped file truncated by another process while it is hashed kills
/// the reader (SIGBUS).
pub fn hash_own_file(file: &Path) -> std::io::Result<Hash> {
    let mut hasher = blake3::Hasher::new();
    hasher.update_mmap_rayon(file)?;
    Ok(hasher.finalize().to_hex().to_string())
}
