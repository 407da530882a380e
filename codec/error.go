package codec

// Error is a dialect-neutral API error: an HTTP status, a kind that each
// dialect maps to its own type string, and a message (JSON-escaped, no
// quotes). Code carries OpenAI's error code when one is known (for example
// context_length_exceeded), escaped, no quotes.
type Error struct {
	Status  int
	Kind    ErrorKind
	Message []byte
	Code    []byte
}

// ErrorKind classifies an error across dialects (docs/TRANSLATION.md, errors).
type ErrorKind uint8

// Error kinds.
const (
	ErrInvalidRequest ErrorKind = iota
	ErrAuthentication
	ErrPermission
	ErrNotFound
	ErrTooLarge
	ErrRateLimit
	ErrAPI // upstream or internal failure (500, 502)
	ErrOverloaded
	ErrTimeout
	ErrNotImplemented
	ErrContextLength
)

// KindForStatus returns the error kind that an HTTP status implies.
func KindForStatus(status int) ErrorKind {
	switch status {
	case 400, 422:
		return ErrInvalidRequest
	case 401:
		return ErrAuthentication
	case 402, 403:
		return ErrPermission
	case 404:
		return ErrNotFound
	case 413:
		return ErrTooLarge
	case 429:
		return ErrRateLimit
	case 501:
		return ErrNotImplemented
	case 503, 529:
		return ErrOverloaded
	case 504, 408:
		return ErrTimeout
	}
	if status >= 400 && status < 500 {
		return ErrInvalidRequest
	}
	return ErrAPI
}

// StatusForKind returns the HTTP status a kind is sent with when no
// upstream status is known.
func StatusForKind(k ErrorKind) int {
	switch k {
	case ErrAuthentication:
		return 401
	case ErrPermission:
		return 403
	case ErrNotFound:
		return 404
	case ErrTooLarge:
		return 413
	case ErrRateLimit:
		return 429
	case ErrAPI:
		return 502
	case ErrOverloaded:
		return 503
	case ErrTimeout:
		return 504
	case ErrNotImplemented:
		return 501
	}
	return 400
}
