package bedrock

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/smithy-go/logging"

	"github.com/strata-agent/strata/llm"
)

// The registered constructor builds the client in AWS_REGION (default
// us-east-1): with an APIKey (render) it signs with that static key and
// sends nothing real; otherwise the AWS SDK's default credential chain is
// used, checked first (checkCredentials).
func init() {
	llm.RegisterClient(llm.APIBedrock, func(c llm.ClientConfig) (llm.Provider, error) {
		cfg := Config{Region: os.Getenv("AWS_REGION"), BaseURL: c.BaseURL, HTTPClient: c.HTTPClient, MaxRetries: c.MaxRetries, Limits: c.Limits}
		if cfg.Region == "" {
			cfg.Region = "us-east-1"
		}
		if c.APIKey != "" {
			cfg.AccessKeyID, cfg.SecretAccessKey = c.APIKey, c.APIKey
		} else if err := checkCredentials(cfg.Region); err != nil {
			return nil, err
		}
		return New(cfg)
	})
}

// errNoAWSCredentials names what to set when the credential chain finds
// none; it wraps llm.ErrNoCredentials.
var errNoAWSCredentials = fmt.Errorf("bedrock: no AWS credentials found (%w): set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "+
	"(and AWS_SESSION_TOKEN for temporary keys), or AWS_PROFILE naming a profile in ~/.aws/credentials or ~/.aws/config "+
	"(run 'aws configure' or 'aws sso login'); set AWS_REGION to the Bedrock region (default us-east-1)", llm.ErrNoCredentials)

// credentialWait bounds the credential check: the instance-metadata source
// (the chain's last) answers within it on EC2, and elsewhere fails fast or
// times out.
const credentialWait = 3 * time.Second

// checkCredentials asks the AWS SDK's default credential chain (env,
// shared files, SSO, web identity, container, EC2 instance metadata; AWS
// SDK for Go v2 "Specifying Credentials") for credentials before the
// client is built, with the SDK's logger silenced so none of its WARN lines
// reach stderr. It returns an error wrapping errNoAWSCredentials (and the
// chain's error) when none are found within credentialWait.
func checkCredentials(region string) error {
	ctx, cancel := context.WithTimeout(context.Background(), credentialWait)
	defer cancel()
	cfg, err := config.LoadDefaultConfig(ctx, config.WithRegion(region), config.WithLogger(logging.Nop{}), config.WithClientLogMode(0))
	if err != nil {
		return fmt.Errorf("%w (loading the AWS configuration: %v)", errNoAWSCredentials, err)
	}
	if cfg.Credentials == nil {
		return errNoAWSCredentials
	}
	if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
		return fmt.Errorf("%w (credential chain: %v)", errNoAWSCredentials, err)
	}
	return nil
}
