// Package lm is the language-model policy's leaf: what a model reads and
// what it may answer, and the client of a model behind an OpenAI-compatible
// server.
//
//   - Prompt renders an observation as chat messages: the action grammar
//     (from the action table, so a new row is offered without a change
//     here), the instruction, the page as BrowserGym-style accessibility
//     text with element ids (bids), the page's text, and the episode's last
//     steps (the observation's memory), older pages only by their text.
//   - ParseReply takes the one action out of a reply and checks it against
//     the action table's grammar, the run's action set and the page's bids:
//     a reply that names no valid action on this page is an *InvalidError,
//     never an action the env would run.
//   - Client sends POST {base}/v1/chat/completions and returns the reply
//     with every output token's log-prob (and its id where the server gives
//     it: vLLM's return_token_ids, llama.cpp's logprobs id): what the
//     learner needs as the behaviour policy's log-prob. Timeouts and bounded
//     retries are its own; a refused, garbled or log-prob-less reply is a
//     *ServerError with the reason and the (clipped) body, for a dead
//     letter. The API key is sent as a bearer token and never appears in an
//     error, a log line or an event.
//
// The package knows no Kafka and no browser: the actor's openai backend
// (services/actor) puts it behind the Policy seam.
package lm
