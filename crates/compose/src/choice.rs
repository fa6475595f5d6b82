//! A setting a person picks by name.

/// One value of a setting a person picks by name (`--backend sqlite`): the name as typed and
/// saved, and what it means. Command lines list these; the configuration types know no parser.
#[derive(Debug, Clone, Copy)]
pub struct Choice<T: 'static> {
    pub name: &'static str,
    pub help: &'static str,
    pub value: T,
}
