pub mod polyglot;
