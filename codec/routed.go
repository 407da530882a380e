package codec

// RoutedMembers are the top-level members of a request body the server
// reads before it routes the request: the model, the stream flag, the
// metadata and the prompt cache key. A transport that builds the body it
// serves (the Responses WebSocket expands each frame) reports where they
// lie in it, so that the server need not look for them again.
var RoutedMembers = [...]string{"model", "stream", "metadata", "prompt_cache_key"}
