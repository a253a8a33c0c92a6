//! Whether a schema compiles, with the crate the generated code validates with at run time
//! (`jsonschema`, behind the `schemas` feature): a schema that would fail there is refused at
//! build time, at the place in its file that is wrong.

use crate::diagnostic::Code;
use crate::parse::yaml::Node;
#[cfg(feature = "schemas")]
use crate::parse::yaml::NodeKind;
use crate::source::Span;
use serde_json::Value;

pub(super) struct Problem {
    pub code: Code,
    /// A JSON pointer into the schema.
    pub pointer: String,
    /// Where the pointer leads in the schema file, as far as it exists there.
    pub span: Option<Span>,
    pub message: String,
    pub help: &'static str,
}

#[cfg(feature = "schemas")]
pub(super) fn compiles(json: &Value, root: &Node) -> Result<(), Problem> {
    let error = match jsonschema::validator_for(json) {
        Ok(_) => return Ok(()),
        Err(error) => error,
    };
    let pointer = error.instance_path().to_string();
    Err(Problem {
        code: Code::BAD_SCHEMA,
        span: Some(node_at(root, &pointer).span),
        pointer,
        message: error.to_string(),
        help: "fix the schema; its `$ref`s may only point inside it (`#/$defs/...`): copy other schemas into its `$defs`",
    })
}

#[cfg(not(feature = "schemas"))]
pub(super) fn compiles(_json: &Value, _root: &Node) -> Result<(), Problem> {
    Err(Problem {
        code: Code::SCHEMAS_FEATURE,
        pointer: String::new(),
        span: None,
        message:
            "data schemas are validated with the `jsonschema` crate, which this build leaves out"
                .into(),
        help: "turn on the `schemas` feature of `swf-runtime` (for `workflow!`) or of `swf-codegen` (for build.rs), or remove the schema",
    })
}

/// The node a JSON pointer leads to, or the deepest one on its way that exists.
#[cfg(feature = "schemas")]
fn node_at<'a>(root: &'a Node, pointer: &str) -> &'a Node {
    let mut node = root;
    for token in pointer.split('/').skip(1) {
        let token = token.replace("~1", "/").replace("~0", "~");
        let next = match &node.kind {
            NodeKind::Map(entries) => entries.iter().find(|e| e.key == token).map(|e| &e.value),
            NodeKind::Seq(items) => token.parse::<usize>().ok().and_then(|i| items.get(i)),
            NodeKind::Scalar(_) => None,
        };
        match next {
            Some(next) => node = next,
            None => break,
        }
    }
    node
}

#[cfg(all(test, feature = "schemas"))]
mod tests {
    use super::*;
    use crate::diagnostic::Diagnostics;

    #[test]
    fn a_pointer_leads_to_its_node_or_the_deepest_on_its_way() {
        let mut diags = Diagnostics::new("s.json");
        let text = "{\n  \"properties\": {\n    \"a/b\": {\"type\": \"objekt\"},\n    \"list\": [1, 2]\n  }\n}\n";
        let root = crate::parse::yaml::load(text, &mut diags).expect("parses");
        assert_eq!(
            node_at(&root, "/properties/a~1b/type").span,
            Span::new(3, 21)
        );
        assert_eq!(node_at(&root, "/properties/list/1").span, Span::new(4, 17));
        assert_eq!(
            node_at(&root, "/properties/missing/x").span,
            Span::new(2, 17)
        );
        assert_eq!(node_at(&root, "").span, root.span);
    }
}
