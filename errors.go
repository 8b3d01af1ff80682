package cortex

import (
	"errors"
	"fmt"
	"net/http"
)

// Code classifies an error for callers. Each surface maps it: HTTP status,
// MCP error, CLI exit code.
type Code string

// Error codes.
const (
	CodeInvalid      Code = "invalid"
	CodeNotFound     Code = "not_found"
	CodeConflict     Code = "conflict"
	CodeUnauthorized Code = "unauthorized"
	CodeForbidden    Code = "forbidden"
	CodeBusy         Code = "busy"
	CodeUnavailable  Code = "unavailable"
	CodeInternal     Code = "internal"
)

// Error is an error with a code and a message that is safe to show to
// callers. Err, when set, carries internal detail for logs only.
type Error struct {
	Code    Code
	Message string
	Err     error
}

// Error implements error. It returns the caller-safe message only.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the internal cause.
func (e *Error) Unwrap() error { return e.Err }

// Errorf builds an *Error with a formatted caller-safe message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// WrapError builds an *Error that keeps err as internal cause.
func WrapError(code Code, err error, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Err: err}
}

// ErrorCode returns the code of the first *Error in err's chain, or
// CodeInternal.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// ErrorMessage returns the caller-safe message of err: the message of the
// first *Error in its chain, or a generic text for anything else.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}

// HTTPStatus maps a code to an HTTP status.
func (c Code) HTTPStatus() int {
	switch c {
	case CodeInvalid:
		return http.StatusBadRequest
	case CodeNotFound:
		return http.StatusNotFound
	case CodeConflict:
		return http.StatusConflict
	case CodeUnauthorized:
		return http.StatusUnauthorized
	case CodeForbidden:
		return http.StatusForbidden
	case CodeBusy:
		return http.StatusTooManyRequests
	case CodeUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// ExitCode maps a code to a CLI exit status (documented in docs/cli.md).
func (c Code) ExitCode() int {
	switch c {
	case CodeInvalid:
		return 2
	case CodeNotFound:
		return 3
	case CodeConflict:
		return 4
	case CodeUnauthorized, CodeForbidden:
		return 5
	case CodeBusy:
		return 6
	case CodeUnavailable:
		return 7
	}
	return 1
}
