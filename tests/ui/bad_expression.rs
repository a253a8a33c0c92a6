swf_runtime::workflow!("ui/bad_expression.sw.yaml");

fn main() {}
