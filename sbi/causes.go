package sbi

// The ProblemDetails "cause" strings our NFs send and test for, written once
// so that a typo is a compile error and a grep finds every user. They are
// untyped constants: ProblemDetails.Cause is a plain string.

// Causes common to every SBI API (TS 29.500 5.2.7.2, table 5.2.7.2-1).
const (
	CauseInvalidAPI                   = "INVALID_API"                      // 400
	CauseInvalidMsgFormat             = "INVALID_MSG_FORMAT"               // 400: the body does not decode
	CauseInvalidQueryParam            = "INVALID_QUERY_PARAM"              // 400
	CauseMandatoryQueryParamIncorrect = "MANDATORY_QUERY_PARAM_INCORRECT"  // 400
	CauseMandatoryQueryParamMissing   = "MANDATORY_QUERY_PARAM_MISSING"    // 400
	CauseMandatoryIEIncorrect         = "MANDATORY_IE_INCORRECT"           // 400
	CauseMandatoryIEMissing           = "MANDATORY_IE_MISSING"             // 400
	CauseOptionalIEIncorrect          = "OPTIONAL_IE_INCORRECT"            // 400
	CauseUnspecifiedMsgFailure        = "UNSPECIFIED_MSG_FAILURE"          // 400
	CauseModificationNotAllowed       = "MODIFICATION_NOT_ALLOWED"         // 403
	CauseSubscriptionNotFound         = "SUBSCRIPTION_NOT_FOUND"           // 404
	CauseResourceURIStructureNotFound = "RESOURCE_URI_STRUCTURE_NOT_FOUND" // 404
	CauseUnsupportedMediaType         = "UNSUPPORTED_MEDIA_TYPE"           // 415
	CauseNFCongestionRisk             = "NF_CONGESTION_RISK"               // 429
	CauseInsufficientResources        = "INSUFFICIENT_RESOURCES"           // 500
	CauseUnspecifiedNFFailure         = "UNSPECIFIED_NF_FAILURE"           // 500
	CauseSystemFailure                = "SYSTEM_FAILURE"                   // 500
	CauseNFCongestion                 = "NF_CONGESTION"                    // 503
	CauseTargetNFNotReachable         = "TARGET_NF_NOT_REACHABLE"          // 504: a relayed peer did not answer
	CauseTimedOutRequest              = "TIMED_OUT_REQUEST"                // 504
	CauseUpstreamServerError          = "UPSTREAM_SERVER_ERROR"            // 504: a relayed peer answered with an error
)

// Causes of particular services, named by the specification that defines them.
const (
	// TS 29.503 (Nudm) and TS 29.504/29.505 (Nudr).
	CauseUserNotFound                = "USER_NOT_FOUND"                // 404
	CauseDataNotFound                = "DATA_NOT_FOUND"                // 404
	CauseContextNotFound             = "CONTEXT_NOT_FOUND"             // 404, also TS 29.509, 29.518 callbacks
	CauseAuthenticationRejected      = "AUTHENTICATION_REJECTED"       // 403
	CauseInvalidGUAMI                = "INVALID_GUAMI"                 // 403
	CauseUnsupportedProtectionScheme = "UNSUPPORTED_PROTECTION_SCHEME" // 501
	// TS 29.509 (Nausf): the serving network name is not this home network's.
	CauseServingNetworkNotAuthorized = "SERVING_NETWORK_NOT_AUTHORIZED" // 403
	// The NRF's answer for an NF instance it does not hold.
	CauseResourceNotFound = "RESOURCE_NOT_FOUND" // 404
	// The provisioning API (nf/udr, not 3GPP): the subscriber exists already.
	CauseSubscriberExists = "SUBSCRIBER_EXISTS" // 409
	// The provisioning API: a bulk request over the UDR's udr.max_bulk.
	CauseBulkTooLarge = "BULK_TOO_LARGE" // 413
)
