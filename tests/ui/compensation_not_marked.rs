swf_runtime::workflow!("../../../../tests/ui/compensation_not_marked.sw.yaml");

fn main() {}
