package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// s3Store writes objects to an S3 bucket with aws-sdk-go-v2. Failed
// requests are retried s3.part.retries times with exponential backoff
// starting at s3.retry.backoff.ms (the SDK's standard retryer).
type s3Store struct {
	client *s3.Client
	bucket string
}

func newS3Store(ctx context.Context, c *Config) (*s3Store, error) {
	backoff := time.Duration(max(c.RetryBackoffMs, 1)) * time.Millisecond
	opts := []func(*awsconfig.LoadOptions) error{
		awsconfig.WithRegion(c.Region),
		awsconfig.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = int(c.PartRetries) + 1
				o.Backoff = retry.NewExponentialJitterBackoff(backoff * 32)
				o.MaxBackoff = backoff * 32
			})
		}),
	}
	if c.AccessKeyID != "" {
		opts = append(opts, awsconfig.WithCredentialsProvider(
			credentials.NewStaticCredentialsProvider(c.AccessKeyID, c.SecretKey.Value(), "")))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("s3: load AWS configuration: %w", err)
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.UsePathStyle = c.PathStyle
		if c.StoreURL != "" {
			o.BaseEndpoint = aws.String(c.StoreURL)
		}
		// Checksums only when the operation requires them: S3-compatible
		// servers do not all accept the newer default trailers.
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	return &s3Store{client: client, bucket: c.Bucket}, nil
}

// isExists reports a failed conditional write (412 Precondition Failed, or
// 409 ConditionalRequestConflict from a concurrent one).
func isExists(err error) bool {
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) && (re.HTTPStatusCode() == http.StatusPreconditionFailed || re.HTTPStatusCode() == http.StatusConflict) {
		return true
	}
	var ae smithy.APIError
	return errors.As(err, &ae) && (ae.ErrorCode() == "PreconditionFailed" || ae.ErrorCode() == "ConditionalRequestConflict")
}

func (s *s3Store) put(ctx context.Context, key string, body io.ReadSeeker, size int64, ifAbsent bool) error {
	in := &s3.PutObjectInput{Bucket: &s.bucket, Key: &key, Body: body, ContentLength: &size}
	if ifAbsent {
		in.IfNoneMatch = aws.String("*")
	}
	if _, err := s.client.PutObject(ctx, in); err != nil {
		if ifAbsent && isExists(err) {
			return errExists
		}
		return fmt.Errorf("s3: put s3://%s/%s: %w", s.bucket, key, err)
	}
	return nil
}

type s3Upload struct {
	s     *s3Store
	key   string
	id    *string
	parts []types.CompletedPart
}

func (s *s3Store) multipart(ctx context.Context, key string) (upload, error) {
	out, err := s.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		return nil, fmt.Errorf("s3: start multipart upload of s3://%s/%s: %w", s.bucket, key, err)
	}
	return &s3Upload{s: s, key: key, id: out.UploadId}, nil
}

func (u *s3Upload) part(ctx context.Context, body io.ReadSeeker, size int64) error {
	n := int32(len(u.parts) + 1)
	out, err := u.s.client.UploadPart(ctx, &s3.UploadPartInput{
		Bucket: &u.s.bucket, Key: &u.key, UploadId: u.id, PartNumber: &n, Body: body, ContentLength: &size,
	})
	if err != nil {
		return fmt.Errorf("s3: upload part %d of s3://%s/%s: %w", n, u.s.bucket, u.key, err)
	}
	u.parts = append(u.parts, types.CompletedPart{ETag: out.ETag, PartNumber: &n})
	return nil
}

func (u *s3Upload) complete(ctx context.Context, ifAbsent bool) error {
	in := &s3.CompleteMultipartUploadInput{
		Bucket: &u.s.bucket, Key: &u.key, UploadId: u.id,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: u.parts},
	}
	if ifAbsent {
		in.IfNoneMatch = aws.String("*")
	}
	if _, err := u.s.client.CompleteMultipartUpload(ctx, in); err != nil {
		if ifAbsent && isExists(err) {
			_ = u.abort(ctx)
			return errExists
		}
		return fmt.Errorf("s3: complete multipart upload of s3://%s/%s: %w", u.s.bucket, u.key, err)
	}
	return nil
}

func (u *s3Upload) abort(ctx context.Context) error {
	_, err := u.s.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &u.s.bucket, Key: &u.key, UploadId: u.id})
	if err != nil {
		return fmt.Errorf("s3: abort multipart upload of s3://%s/%s: %w", u.s.bucket, u.key, err)
	}
	return nil
}

// check is the validate-time test: the bucket exists and the credentials
// may use it.
func (s *s3Store) check(ctx context.Context) error {
	_, err := s.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &s.bucket})
	if err == nil {
		return nil
	}
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) {
		switch re.HTTPStatusCode() {
		case http.StatusNotFound:
			return fmt.Errorf("bucket %q does not exist: create it first or fix s3.bucket.name", s.bucket)
		case http.StatusForbidden, http.StatusUnauthorized, http.StatusBadRequest:
			return fmt.Errorf("access to bucket %q denied (HTTP %d): check aws.access.key.id/aws.secret.access.key or the default credentials and the bucket's policy", s.bucket, re.HTTPStatusCode())
		}
	}
	return fmt.Errorf("cannot reach bucket %q: %w", s.bucket, err)
}

func (s *s3Store) list(ctx context.Context, prefix string) ([]string, error) {
	var out []string
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: &prefix})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("s3: list s3://%s/%s: %w", s.bucket, prefix, err)
		}
		for _, o := range page.Contents {
			out = append(out, *o.Key)
		}
	}
	return out, nil
}

func (s *s3Store) get(ctx context.Context, key string) ([]byte, error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		return nil, fmt.Errorf("s3: get s3://%s/%s: %w", s.bucket, key, err)
	}
	defer out.Body.Close()
	return io.ReadAll(out.Body)
}
