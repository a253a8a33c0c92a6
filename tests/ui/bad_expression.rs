swf_runtime::workflow!("../../../../tests/ui/bad_expression.sw.yaml");

fn main() {}
