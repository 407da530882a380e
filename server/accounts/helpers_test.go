package accounts

import "net/http"

func http0() *http.Client { return &http.Client{} }
