package webenv

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"runtime/debug"
)

// writeJSON writes v as JSON with the status code.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// errorBody is the body of every error response.
type errorBody struct {
	Error string `json:"error"`
}

// writeError writes {"error": reason}.
func writeError(w http.ResponseWriter, status int, reason string) {
	writeJSON(w, status, errorBody{Error: reason})
}

// recoverMiddleware turns a panic in a handler into a 500 JSON answer and a
// log line, so that no request can take the server down.
func recoverMiddleware(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				log.Error("handler panic", "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
				writeError(w, http.StatusInternalServerError, "internal error")
			}
		}()
		next.ServeHTTP(w, r)
	})
}
