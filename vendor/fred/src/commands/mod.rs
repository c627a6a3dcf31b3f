mod impls;
pub mod interfaces;
pub use impls::*;
