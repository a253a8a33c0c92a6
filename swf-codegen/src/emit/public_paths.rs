//! Generated code reaches the runtime through `::swf_runtime::__private`, which rustdoc hides:
//! a public signature that names a type through it shows the type without a link. This pass,
//! run last over the generated tokens, names the runtime's public types by their public path
//! (`::swf_runtime::WorkflowError`), so the user's rustdoc links them; `__private` keeps what is
//! not public API (the helpers generated bodies call).

use proc_macro2::{Group, TokenStream, TokenTree};

/// The runtime's items that are public at its root under the same name as in `__private`.
const PUBLIC: &[&str] = &[
    "ActionResume",
    "CallbackPhase",
    "CloudEvent",
    "Compensating",
    "CompensationLog",
    "CustomCondition",
    "ErrorObject",
    "EventEntry",
    "EventSpec",
    "FunctionError",
    "Io",
    "Iteration",
    "Iterations",
    "Machine",
    "Progress",
    "RetryPolicy",
    "RetryProgress",
    "ScheduleWindow",
    "ScopeEnd",
    "ScopeState",
    "Slot",
    "StartOnEvents",
    "Timestamp",
    "Value",
    "Wait",
    "WorkflowError",
    "WorkflowInfo",
];

/// `tokens` with every `::swf_runtime::__private::X` of a public `X` written
/// `::swf_runtime::X`.
pub(crate) fn public_paths(tokens: TokenStream) -> TokenStream {
    let mut trees: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out = Vec::with_capacity(trees.len());
    let mut index = 0;
    while index < trees.len() {
        if let Some(name) = private_public_item(&trees[index..]) {
            // `:: swf_runtime ::` stays (five tokens); `__private ::` goes.
            out.extend(trees[index..index + 5].iter().cloned());
            out.push(trees[index + 8].clone());
            debug_assert_eq!(trees[index + 8].to_string(), name);
            index += 9;
            continue;
        }
        out.push(match &trees[index] {
            TokenTree::Group(group) => {
                let mut rebuilt = Group::new(group.delimiter(), public_paths(group.stream()));
                rebuilt.set_span(group.span());
                TokenTree::Group(rebuilt)
            }
            // Moved out, not cloned (an identifier's clone copies its text); only later
            // positions are looked at again.
            _ => std::mem::replace(
                &mut trees[index],
                TokenTree::Punct(proc_macro2::Punct::new('.', proc_macro2::Spacing::Alone)),
            ),
        });
        index += 1;
    }
    out.into_iter().collect()
}

/// The public item named by `:: swf_runtime :: __private :: X` at the start of `trees`.
fn private_public_item(trees: &[TokenTree]) -> Option<String> {
    let [a, b, krate, c, d, private, e, f, item, ..] = trees else {
        return None;
    };
    let colon = |tree: &TokenTree| matches!(tree, TokenTree::Punct(p) if p.as_char() == ':');
    let word = |tree: &TokenTree, text: &str| matches!(tree, TokenTree::Ident(i) if i == text);
    let path = [a, b, c, d, e, f].into_iter().all(colon)
        && word(krate, "swf_runtime")
        && word(private, "__private");
    let TokenTree::Ident(item) = item else {
        return None;
    };
    let name = item.to_string();
    (path && PUBLIC.contains(&name.as_str())).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    #[test]
    fn public_types_lose_the_private_segment_and_helpers_keep_it() {
        let tokens = quote! {
            fn run(io: &::swf_runtime::__private::Io) -> ::core::result::Result<
                ::swf_runtime::__private::Value,
                ::swf_runtime::__private::WorkflowError,
            > {
                ::swf_runtime::__private::run_to_end(vec![::swf_runtime::__private::Value::Null])
            }
        };
        let text = public_paths(tokens).to_string();
        assert!(text.contains(":: swf_runtime :: Io"), "{text}");
        assert!(text.contains(":: swf_runtime :: WorkflowError"), "{text}");
        assert!(text.contains(":: swf_runtime :: Value :: Null"), "{text}");
        assert!(
            text.contains(":: swf_runtime :: __private :: run_to_end"),
            "{text}"
        );
        assert!(!text.contains("__private :: Value"), "{text}");
    }
}
