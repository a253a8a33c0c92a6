swf_runtime::workflow!("ui/compensation_not_marked.sw.yaml");

fn main() {}
