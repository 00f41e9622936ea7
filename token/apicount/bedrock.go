package apicount

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// bedrockCountFields are the fields of a Converse request that CountTokens
// accepts in its "converse" input (AWS API reference, ConverseTokensRequest:
// messages, system, toolConfig, additionalModelRequestFields);
// inferenceConfig and the rest are left out.
var bedrockCountFields = []string{"messages", "system", "toolConfig", "additionalModelRequestFields"}

// Bedrock counts a Converse request body (the JSON strata renders for
// ConverseStream) with Bedrock Runtime's CountTokens (POST
// /model/MODEL/count-tokens, through aws-sdk-go-v2's bedrockruntime), sent as
// {"input": {"converse": {…the body's countable fields}}}. It signs with
// cfg.APIKey and cfg.Secret (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) when
// both are set, else with the AWS SDK's default credential chain (profile,
// SSO, roles), in cfg.Region (default us-east-1). cfg.BaseURL replaces the
// endpoint (AWS_ENDPOINT_URL_BEDROCK_RUNTIME).
func Bedrock(ctx context.Context, model string, body []byte, cfg Config) (int64, error) {
	converse, err := pick(body, bedrockCountFields)
	if err != nil {
		return 0, fmt.Errorf("bedrock CountTokens: %w", err)
	}
	countBody, err := json.Marshal(map[string]any{"input": map[string]any{"converse": converse}})
	if err != nil {
		return 0, err
	}
	region := cfg.Region
	if region == "" {
		region = "us-east-1"
	}
	opts := []func(*config.LoadOptions) error{config.WithRegion(region), config.WithRetryMaxAttempts(1)}
	if cfg.APIKey != "" && cfg.Secret != "" {
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(cfg.APIKey, cfg.Secret, cfg.SessionToken)))
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, config.WithHTTPClient(cfg.HTTPClient))
	}
	ac, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return 0, fmt.Errorf("bedrock CountTokens: AWS configuration: %w", err)
	}
	client := bedrockruntime.NewFromConfig(ac, func(o *bedrockruntime.Options) {
		if cfg.BaseURL != "" {
			o.BaseEndpoint = aws.String(cfg.BaseURL)
		}
		o.APIOptions = append(o.APIOptions, replaceBody(countBody))
	})
	// The typed input only passes the SDK's validation: replaceBody sends
	// the rendered request's own fields instead.
	in := &bedrockruntime.CountTokensInput{ModelId: aws.String(model), Input: &types.CountTokensInputMemberConverse{
		Value: types.ConverseTokensRequest{Messages: []types.Message{{Role: types.ConversationRoleUser,
			Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "-"}}}}}}}
	out, err := client.CountTokens(ctx, in)
	if err != nil {
		return 0, fmt.Errorf("bedrock CountTokens: %w", err)
	}
	if out.InputTokens == nil {
		return 0, errors.New("bedrock CountTokens: the answer has no inputTokens")
	}
	return int64(*out.InputTokens), nil
}

// replaceBody is an SDK stack option that sends body as the request body,
// after serialization and before signing (SigV4 hashes the body it sends).
func replaceBody(body []byte) func(*middleware.Stack) error {
	return func(stack *middleware.Stack) error {
		return stack.Build.Add(middleware.BuildMiddlewareFunc("strataCountTokensBody",
			func(ctx context.Context, in middleware.BuildInput, next middleware.BuildHandler) (middleware.BuildOutput, middleware.Metadata, error) {
				req, ok := in.Request.(*smithyhttp.Request)
				if !ok {
					return middleware.BuildOutput{}, middleware.Metadata{}, fmt.Errorf("bedrock CountTokens: unexpected transport request %T", in.Request)
				}
				r, err := req.SetStream(bytes.NewReader(body))
				if err != nil {
					return middleware.BuildOutput{}, middleware.Metadata{}, err
				}
				r.ContentLength = int64(len(body))
				in.Request = r
				return next.HandleBuild(ctx, in)
			}), middleware.After)
	}
}
