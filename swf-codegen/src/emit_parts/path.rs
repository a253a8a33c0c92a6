//! JSONPaths in generated code: each becomes a `static`, so a query is compiled at most once
//! per process and a definite path is a constant list of steps.

use crate::ir::{JsonPath, PathKind, PathSegment};
use proc_macro2::{Literal, TokenStream};
use quote::quote;

/// An expression of type `&'static ::swf_runtime::__private::JsonPath` for `path`.
pub fn path_ref(path: &JsonPath) -> TokenStream {
    let constructor = match &path.kind {
        PathKind::Definite(segments) => {
            // Messages at run time should show the path as the user wrote it.
            let text = Literal::string(path.text.trim());
            let segments = segments.iter().map(segment);
            let constructor = if path.strict {
                quote!(definite_strict)
            } else {
                quote!(definite)
            };
            quote! {
                ::swf_runtime::__private::JsonPath::#constructor(#text, &[#(#segments),*])
            }
        }
        PathKind::Query(normalized) => {
            // The engine runs the normalized (RFC 9535) text, not the Jayway spelling.
            let text = Literal::string(normalized);
            quote! { ::swf_runtime::__private::JsonPath::query(#text) }
        }
        PathKind::Invalid => {
            // Invalid files never reach emission; if one did, fail the build, not the run.
            let message = Literal::string(&format!(
                "swf: the JSONPath `{}` did not parse; fix the diagnostics first",
                path.text
            ));
            return quote! { ::core::compile_error!(#message) };
        }
    };
    quote! {
        {
            static PATH: ::swf_runtime::__private::JsonPath = #constructor;
            &PATH
        }
    }
}

fn segment(segment: &PathSegment) -> TokenStream {
    match segment {
        PathSegment::Key(key) => {
            let key = Literal::string(key);
            quote! { ::swf_runtime::__private::Segment::Key(#key) }
        }
        PathSegment::Index(index) => {
            let index = Literal::usize_unsuffixed(*index);
            quote! { ::swf_runtime::__private::Segment::Index(#index) }
        }
        PathSegment::FromEnd(from_end) => {
            let from_end = Literal::usize_unsuffixed(*from_end);
            quote! { ::swf_runtime::__private::Segment::FromEnd(#from_end) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Diagnostics;
    use crate::emit_parts::pretty;
    use crate::source::Span;

    fn emitted(text: &str) -> String {
        let mut diags = Diagnostics::new("wf.yaml");
        let path = crate::syntax::jsonpath::parse(text, Span::new(1, 1), &mut diags);
        pretty::expression(path_ref(&path))
    }

    #[test]
    fn definite_paths_are_static_segment_lists() {
        assert_eq!(
            emitted("$.a['b \"c\"'][0]"),
            r#"fn emitted() {
    {
        static PATH: ::swf_runtime::__private::JsonPath = ::swf_runtime::__private::JsonPath::definite(
            "$.a['b \"c\"'][0]",
            &[
                ::swf_runtime::__private::Segment::Key("a"),
                ::swf_runtime::__private::Segment::Key("b \"c\""),
                ::swf_runtime::__private::Segment::Index(0),
            ],
        );
        &PATH
    }
}
"#
        );
        let root = emitted("$");
        assert!(
            root.contains("JsonPath::definite(\n            \"$\",\n            &[],\n        )"),
            "{root}"
        );
    }

    #[test]
    fn queries_hold_the_normalized_text() {
        let text = emitted("$.vegetables.[?(@.veggieLike)]");
        assert!(
            text.contains(
                "JsonPath::query(\n            \"$.vegetables[?((@.veggieLike && @.veggieLike != false && @.veggieLike != null))]\",\n        )"
            ) || text.contains(
                "JsonPath::query(\"$.vegetables[?((@.veggieLike && @.veggieLike != false && @.veggieLike != null))]\")"
            ),
            "{text}"
        );
        assert!(text.contains("static PATH"));
    }

    #[test]
    fn user_text_is_only_ever_a_string_literal() {
        let text = emitted("$['\"); panic!(\"x']");
        assert!(
            text.contains(r#"Segment::Key("\"); panic!(\"x")"#),
            "{text}"
        );
    }

    #[test]
    fn invalid_paths_fail_the_build() {
        let path = JsonPath {
            text: "nope".to_string(),
            kind: PathKind::Invalid,
            span: Span::new(1, 1),
            strict: false,
        };
        let text = path_ref(&path).to_string();
        assert!(text.starts_with(":: core :: compile_error !"), "{text}");
        assert!(text.contains("nope"));
    }

    #[test]
    fn emission_is_deterministic() {
        let mut diags = Diagnostics::new("wf.yaml");
        for text in ["$.a.b[3]", "$..title", "$.people[?(@.age < 40)]"] {
            let path = crate::syntax::jsonpath::parse(text, Span::new(1, 1), &mut diags);
            assert_eq!(
                path_ref(&path).to_string(),
                path_ref(&path.clone()).to_string()
            );
        }
    }
}
