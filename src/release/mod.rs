//! Reproducible releases: the build manifest every make writes (`build/manifest.json`:
//! okb's version, the pipeline's resolved parameters, every source and game file with its
//! BLAKE3, the engine, and every output file with its BLAKE3 and size), and checking a
//! build against one ([`verify`]).
//!
//! A manifest holds no time and no absolute path: the same pins build the same manifest
//! in any folder, with any thread count.

pub mod check;
pub mod manifest;
pub mod verify;

pub use manifest::Manifest;
