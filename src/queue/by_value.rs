//! Which elements a removal by value takes: the mode argument of
//! `lua/remove.lua` (pending elements) and `lua/list_remove.lua` (a list).

use fred::types::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ByValue {
    /// The first element (in list order) whose payload is one of the values.
    First,
    /// Every element whose payload is one of the values.
    All,
    /// Every element whose payload is none of the values (pending only).
    AllBut,
}

impl ByValue {
    /// The scripts' spelling of the mode.
    pub fn arg(self) -> Value {
        Value::from(match self {
            ByValue::First => "first",
            ByValue::All => "all",
            ByValue::AllBut => "retain",
        })
    }
}
