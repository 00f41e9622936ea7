package peers

// goose reproduces Block's goose (block/goose). Verified in the source,
// crates/goose/src/providers/formats/anthropic.rs (the issue names
// formats/anthropic/messages.rs; the functions live in anthropic.rs):
//
//   - format_tools puts cache_control {type: ephemeral} on the last tool
//     spec: BP(last tool);
//   - format_system sends the system prompt as one text block with
//     cache_control: BP(system);
//   - format_messages marks the last block of the last and second-to-last
//     user messages ("so that this checkpoint can read from the previous
//     cache").
//
// No TTL is set: 5 minutes. Mapping: goose's system prompt holds the
// extensions' instructions and the .goosehints files, so the system
// instructions and every context item form the one system block.
func init() { register("goose", lastTwoUsers(true)) } // cline.go
