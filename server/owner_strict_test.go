package server

func init() { CheckOwnershipStrictly() }
